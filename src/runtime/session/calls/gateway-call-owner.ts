/**
 * @module A rollout's gateway call run by its RolloutSession, not by the HTTP invocation that
 * asked for it. Workers cancel `waitUntil` work 30 s after the client disconnects (Cloudflare's
 * documented limit on `ctx.waitUntil`), so a stream whose caller hung up could not be read to its
 * end, recorded and released from the route; the session object is not tied to the caller's
 * connection: it keeps running while its outbound fetch is pending, and the admission shard it
 * releases into is reached from it. The route only authorizes and relays what this returns.
 */
import { ConflictError, LimitExceededError, ModelError, NotFoundError } from "../../../errors";
import { notInterruptibleBecause } from "../../../gateway/interruptible";
import type { Gateway, GatewayCall } from "../../../gateway/gateway";
import type { UpstreamPath } from "../../../gateway/model-backend";
import { chatCompletionOf } from "../../../gateway/openai-chat";
import { storeWhileReleasing } from "../../../gateway/store-while-releasing";
import { toWireError } from "../../../gateway/wire-errors";
import type { JsonObject } from "../../../schemas/json";
import type { LlmCall, LlmCallInput } from "../../../schemas/llm-call";
import type { StreamSeed } from "../../../gateway/resumable-stream";
import { DEFAULT_PROGRESS_CADENCE, type ProgressBatch } from "../../../gateway/stream-progress";
import type { FlightRequest } from "./call-flights";
import type { GatewayCallMeta, GatewayCallResult } from "./gateway-call";
import type { AdmitCallResult, GatewayWriteResult } from "../kernel";

/** What the owner needs from its session. */
export interface CallOwnerDeps {
  rolloutId: string;
  gateway: Gateway;
  /** `resumed`: a call already admitted before its session restarted, run on even if its rollout or attempt ended meanwhile. */
  admitCall(attempt?: number, resumed?: boolean): AdmitCallResult;
  /** The session's flights: a call is kept while it runs, so that it survives the session's restart (call-flights.ts). */
  flights: {
    begin(callId: string, request: FlightRequest): void;
    keep(callId: string, batch: ProgressBatch): void;
    abandon(callId: string): void;
    end(callId: string): void;
  };
  recordCall(call: LlmCallInput): GatewayWriteResult;
  amendCallVersion(callId: string, versionEnd: number): GatewayWriteResult;
  endForLimit(reason: "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH", message: string): void;
  /** Applies the staleness rule at the version a call was admitted under; throws StaleRolloutError (the rollout ended STALE). */
  admitVersion(policyVersion: number): void;
  /** The call a harness turn of `attempt` may continue (the rollout's newest policy call of it). */
  previousTurn(attempt: number | null): LlmCall | null;
  /** Keeps the call's read alive after this RPC answered (the object's `ctx.waitUntil`). */
  keepAlive(work: Promise<unknown>): void;
}

/**
 * The calls running in one session: each call's signal aborts when its caller leaves, and each
 * interruptible call's current interrupt is kept for an `interrupt` weight sync.
 *
 * A call admitted before a sync began may not have registered its interrupt yet when the sync
 * reaches this session (its upstream has not sent its first chunk: prefill, a slow replica), or
 * may run in another invocation this object never saw it enter (the stepwise driver's). The
 * registry keeps the newest version a sync replaced, and a leg of that version or older is cut the
 * moment it registers; otherwise it would run to its end under the old weights, and the sync would
 * wait for the whole generation, tail included. A leg admitted after the sync ended carries the
 * new version, so it is never cut on registering.
 */
export class CallerRegistry {
  readonly #calls = new Map<string, AbortController>();
  readonly #interrupts = new Map<string, () => void>();
  /** The newest version an interrupt sync replaced: a leg of it or older that registers later is cut at once. */
  #cutUpTo: number | undefined;
  /** Interrupts of calls run by another invocation (the rollout's driver), kept past the RPC that passed them. */
  readonly #remote = new Map<string, { [Symbol.dispose]?: () => void }>();

  /** A signal for `callId`, dropped with `done`. */
  enter(callId: string): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    this.#calls.set(callId, controller);
    return {
      signal: controller.signal,
      done: () => {
        this.#calls.delete(callId);
        this.#interrupts.delete(callId);
      },
    };
  }

  /**
   * Registers (or with null, drops) the interrupt of `callId`'s current upstream leg, admitted under
   * `legVersion`. A leg that a sync already passed over (its version replaced) is cut at once.
   */
  setInterrupt(callId: string, interrupt: (() => void) | null, legVersion?: number): void {
    if (interrupt === null) {
      this.#interrupts.delete(callId);
      return;
    }
    if (legVersion !== undefined && this.#cutUpTo !== undefined && legVersion <= this.#cutUpTo)
      return interrupt();
    this.#interrupts.set(callId, interrupt);
  }

  /**
   * `setInterrupt` for a call another invocation runs (the stepwise driver's in-process calls):
   * `interrupt` is an RPC stub of that invocation's function, kept (dup) until replaced or dropped.
   */
  setRemoteInterrupt(callId: string, interrupt: (() => unknown) | null, legVersion?: number): void {
    this.#remote.get(callId)?.[Symbol.dispose]?.();
    this.#remote.delete(callId);
    if (interrupt === null) return this.setInterrupt(callId, null);
    const kept = (interrupt as unknown as { dup?: () => () => unknown }).dup?.() ?? interrupt;
    this.#remote.set(callId, kept as { [Symbol.dispose]?: () => void });
    // The invocation may have ended meanwhile: nothing is left to cut then.
    this.setInterrupt(
      callId,
      () =>
        void Promise.resolve()
          .then(kept)
          .catch(() => undefined),
      legVersion,
    );
  }

  /**
   * Interrupts every interruptible call running here, and remembers `replacedVersion`, so the calls
   * still opening their leg are cut as they register; returns how many calls it reached (cut now,
   * or entered here and still opening).
   */
  interruptAll(replacedVersion?: number): number {
    const registered = [...this.#interrupts];
    this.#interrupts.clear();
    let opening = 0;
    if (replacedVersion !== undefined) {
      this.#cutUpTo = Math.max(replacedVersion, this.#cutUpTo ?? replacedVersion);
      const cut = new Set(registered.map(([callId]) => callId));
      for (const callId of this.#calls.keys()) if (!cut.has(callId)) opening += 1;
    }
    for (const [, interrupt] of registered) interrupt();
    return registered.length + opening;
  }

  /**
   * Stops every call running here and cuts those the rollout's driver runs (its rollout ended
   * STALE: nothing they generate could be trained). A cut call that tries to resume finds its
   * rollout ended.
   */
  stopAll(): void {
    for (const controller of this.#calls.values()) controller.abort();
    this.interruptAll();
  }

  /** The caller of `callId` left (unknown ids, say of a call already over, are ignored). */
  left(callId: string): void {
    this.#calls.get(callId)?.abort();
  }
}

/** A call its session's restart cut, run again: from its kept chunks (`seed`), or whole; `note` goes on its record. */
export interface Resumption {
  seed: StreamSeed | null;
  note: NonNullable<LlmCall["restart"]>;
}

function admitted(
  deps: CallOwnerDeps,
  meta: GatewayCallMeta,
  resumed: boolean,
): Omit<GatewayCall, "whileSyncing" | "callId"> {
  const result = deps.admitCall(meta.pathAttempt, resumed);
  if (!result.ok) {
    if (result.reason === "not_found")
      throw new NotFoundError(`rollout ${deps.rolloutId} does not exist`);
    if (result.reason === "superseded")
      throw new ConflictError(
        `attempt ${meta.pathAttempt} of rollout ${deps.rolloutId} is no longer live (its lease expired or it was handed back); stop this attempt`,
      );
    throw new ConflictError(
      `rollout ${deps.rolloutId} has ended (${result.status}); its gateway accepts no more calls`,
    );
  }
  return {
    rolloutId: deps.rolloutId,
    stepId: null,
    train: result.train,
    model: result.model,
    limits: result.limits,
    replicaHint: result.replica_hint,
    admissionTtlMs: result.call_ttl_ms,
    // A resumed call runs on whatever happened meanwhile (see SessionGatewayOps.admitCall).
    ...(resumed ? {} : { onAdmitted: (policy) => deps.admitVersion(policy.policy_version) }),
  };
}

/**
 * Runs one gateway call to its end: forwarded, read whatever the caller does, recorded, released.
 * The call is kept in the session's flights from its start to its record (or its failure), so a
 * restart of the session finds it and runs it on (`resumption`, call-resume.ts).
 */
export async function ownGatewayCall(
  callers: CallerRegistry,
  deps: CallOwnerDeps,
  path: UpstreamPath,
  body: JsonObject & { stream?: boolean },
  meta: GatewayCallMeta,
  resumption?: Resumption,
): Promise<GatewayCallResult> {
  deps.flights.begin(meta.callId, { path, body, meta });
  // The flight ends with the record; otherwise once the call and all work it left running settled.
  let pending = 1;
  const settle = (): void => {
    if (--pending === 0) deps.flights.end(meta.callId);
  };
  const keepAlive = (work: Promise<unknown>): void => {
    pending += 1;
    deps.keepAlive(work.finally(settle));
  };
  try {
    return await runOwnedCall(callers, { ...deps, keepAlive }, path, body, meta, resumption);
  } finally {
    settle();
  }
}

async function runOwnedCall(
  callers: CallerRegistry,
  deps: CallOwnerDeps,
  path: UpstreamPath,
  body: JsonObject & { stream?: boolean },
  meta: GatewayCallMeta,
  resumption: Resumption | undefined,
): Promise<GatewayCallResult> {
  const drained = notInterruptibleBecause(path, body);
  // A call an interrupting sync cannot cut says so (it is drained instead), whichever way it went upstream.
  const stamp = (record: LlmCall): LlmCall => ({
    ...record,
    purpose: meta.purpose,
    ...(meta.attempt === null ? {} : { attempt: meta.attempt }),
    ...(record.interruption === undefined && drained !== null
      ? { interruption: { interruptible: false, reason: drained, interrupted: 0 } }
      : {}),
    ...(resumption ? { restart: resumption.note } : {}),
  });
  // Stored under the version admitted, corrected if a sync ended meanwhile (store-while-releasing.ts).
  const record = async (call: LlmCall, released: Promise<number>): Promise<void> => {
    const stamped = stamp(call);
    const { versionEnd } = await storeWhileReleasing(
      Promise.resolve().then(() => {
        const written = deps.recordCall(stamped);
        // With no await between them, the record and the flight's end commit together.
        deps.flights.end(stamped.call_id);
        return written;
      }),
      released,
    );
    if (versionEnd !== stamped.policy_version_end)
      deps.amendCallVersion(stamped.call_id, versionEnd);
  };
  try {
    const call: GatewayCall = {
      ...admitted(deps, meta, resumption !== undefined),
      callId: meta.callId,
      whileSyncing: "refuse",
      keepAlive: deps.keepAlive,
      ...(meta.turns && meta.purpose === "policy"
        ? { turn: { previous: deps.previousTurn(meta.attempt) } }
        : {}),
    };
    // A plain chat call is streamed from upstream even for a caller that wants one JSON reply, so
    // that an interrupting sync keeps what was generated; the reply is assembled from the record.
    // (Not with `stream_options`: vLLM refuses those on a non-streamed call, and so must the gateway.)
    const assemble =
      !meta.turns &&
      !body.stream &&
      drained === null &&
      (body.stream_options === undefined || body.stream_options === null);
    if (body.stream || assemble) {
      const caller = callers.enter(meta.callId);
      let whole: LlmCall | undefined;
      const streamed = {
        ...call,
        callerGone: caller.signal,
        relay: !assemble,
        interrupts: (interrupt: (() => void) | null, legVersion?: number) =>
          callers.setInterrupt(meta.callId, interrupt, legVersion),
        // What a call that can resume from token ids received is kept at a cadence, and resumed from after a restart.
        ...(drained === null
          ? {
              progress: {
                cadence: DEFAULT_PROGRESS_CADENCE,
                keep: (batch: ProgressBatch) => deps.flights.keep(meta.callId, batch),
                abandon: () => deps.flights.abandon(meta.callId),
              },
            }
          : {}),
        ...(resumption?.seed ? { seed: resumption.seed } : {}),
      };
      const response = await deps.gateway
        .stream(path, { ...body, stream: true }, streamed, async (recorded, released) => {
          caller.done();
          whole = recorded;
          await record(recorded, released);
        })
        .catch((error: unknown) => {
          caller.done();
          throw error;
        });
      if (!assemble) return { ok: true, stream: response.body! };
      await response.arrayBuffer();
      if (!whole)
        throw new ModelError("the upstream stream ended without a reply", { retryable: false });
      // The non-streamed answer, assembled from the record (with logprobs and ids, as vLLM's own).
      return { ok: true, json: JSON.stringify(chatCompletionOf(whole, { full: true })) };
    }
    const {
      reply,
      replyText,
      call: recorded,
      released,
    } = await deps.gateway.sendUnreleased(path, body, call);
    await record(recorded, released);
    return { ok: true, json: replyText ?? JSON.stringify(reply) };
  } catch (error) {
    if (error instanceof LimitExceededError) deps.endForLimit(error.reason, error.message);
    return { ok: false, error: toWireError(error) };
  }
}
