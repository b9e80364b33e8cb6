/**
 * @module A rollout's gateway call run by its RolloutSession, not by the HTTP invocation that
 * asked for it. Workers cancel `waitUntil` work 30 s after the client disconnects (Cloudflare's
 * documented limit on `ctx.waitUntil`), so a stream whose caller hung up could not be read to its
 * end, recorded and released from the route; the session object is not tied to the caller's
 * connection: it keeps running while its outbound fetch is pending, and the admission shard it
 * releases into is reached from it. The route only authorizes and relays what this returns.
 */
import { ConflictError, LimitExceededError, NotFoundError } from "../src/errors";
import type { Gateway, GatewayCall } from "../src/gateway/gateway";
import type { UpstreamPath } from "../src/gateway/model-backend";
import { storeWhileReleasing } from "../src/gateway/store-while-releasing";
import { type WireError, toWireError } from "../src/gateway/wire-errors";
import type { JsonObject } from "../src/schemas/json";
import type { CallPurpose, LlmCall, LlmCallInput } from "../src/schemas/llm-call";
import type { AdmitCallResult, GatewayWriteResult } from "../src/runtime/session/session-results";

/** Who asked for the call, as the route established it. */
export interface GatewayCallMeta {
  callId: string;
  /** The runner attempt in the path, when the call came through an attempt's endpoint. */
  pathAttempt?: number;
  /** The attempt the call belongs to (path or header), null when neither says. */
  attempt: number | null;
  purpose: CallPurpose;
}

/** The call's answer: an SSE body to relay, a JSON reply's text, or an error as data. */
export type GatewayCallResult = { ok: true; stream: ReadableStream<Uint8Array> } | { ok: true; json: string } | { ok: false; error: WireError };

/** What the owner needs from its session. */
export interface CallOwnerDeps {
  rolloutId: string;
  gateway: Gateway;
  admitCall(attempt?: number): AdmitCallResult;
  recordCall(call: LlmCallInput): GatewayWriteResult;
  amendCallVersion(callId: string, versionEnd: number): GatewayWriteResult;
  endForLimit(reason: "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH", message: string): void;
  /** Keeps the call's read alive after this RPC answered (the object's `ctx.waitUntil`). */
  keepAlive(work: Promise<unknown>): void;
}

/** The callers of the calls running in one session: each call's signal aborts when its caller leaves. */
export class CallerRegistry {
  readonly #calls = new Map<string, AbortController>();

  /** A signal for `callId`, dropped with `done`. */
  enter(callId: string): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    this.#calls.set(callId, controller);
    return { signal: controller.signal, done: () => void this.#calls.delete(callId) };
  }

  /** The caller of `callId` left (unknown ids, say of a call already over, are ignored). */
  left(callId: string): void {
    this.#calls.get(callId)?.abort();
  }
}

function admitted(deps: CallOwnerDeps, meta: GatewayCallMeta): Omit<GatewayCall, "whileSyncing" | "callId"> {
  const result = deps.admitCall(meta.pathAttempt);
  if (!result.ok) {
    if (result.reason === "not_found") throw new NotFoundError(`rollout ${deps.rolloutId} does not exist`);
    if (result.reason === "superseded") throw new ConflictError(`attempt ${meta.pathAttempt} of rollout ${deps.rolloutId} is no longer live (its lease expired or it was handed back); stop this attempt`);
    throw new ConflictError(`rollout ${deps.rolloutId} has ended (${result.status}); its gateway accepts no more calls`);
  }
  return { rolloutId: deps.rolloutId, stepId: null, train: result.train, model: result.model, limits: result.limits, replicaHint: result.replica_hint, admissionTtlMs: result.call_ttl_ms };
}

/** Runs one gateway call to its end: forwarded, read whatever the caller does, recorded, released. */
export async function ownGatewayCall(callers: CallerRegistry, deps: CallOwnerDeps, path: UpstreamPath, body: JsonObject & { stream?: boolean }, meta: GatewayCallMeta): Promise<GatewayCallResult> {
  const stamp = (record: LlmCall): LlmCall => ({ ...record, purpose: meta.purpose, ...(meta.attempt === null ? {} : { attempt: meta.attempt }) });
  // Stored under the version admitted, corrected if a sync ended meanwhile (store-while-releasing.ts).
  const record = async (call: LlmCall, released: Promise<number>): Promise<void> => {
    const stamped = stamp(call);
    const { versionEnd } = await storeWhileReleasing(Promise.resolve().then(() => deps.recordCall(stamped)), released);
    if (versionEnd !== stamped.policy_version_end) deps.amendCallVersion(stamped.call_id, versionEnd);
  };
  try {
    const call: GatewayCall = { ...admitted(deps, meta), callId: meta.callId, whileSyncing: "refuse", keepAlive: deps.keepAlive };
    if (body.stream) {
      const caller = callers.enter(meta.callId);
      const response = await deps.gateway.stream(path, body, { ...call, callerGone: caller.signal }, async (recorded, released) => {
        caller.done();
        await record(recorded, released);
      }).catch((error: unknown) => {
        caller.done();
        throw error;
      });
      return { ok: true, stream: response.body! };
    }
    const { reply, replyText, call: recorded, released } = await deps.gateway.sendUnreleased(path, body, call);
    await record(recorded, released);
    return { ok: true, json: replyText ?? JSON.stringify(reply) };
  } catch (error) {
    if (error instanceof LimitExceededError) deps.endForLimit(error.reason, error.message);
    return { ok: false, error: toWireError(error) };
  }
}
