/** @module The gateway: every model call of every rollout, admitted by the policy, limited, token-exact. */
import { SAMPLE_KEY_HEADER, sampleKeyOf } from "./sample-key";
import { PolicySyncingError } from "../errors";
import type { BackendConfig } from "../schemas/backend-config";
import type { JsonObject } from "../schemas/json";
import { LLM_CALL_SCHEMA_VERSION, type LlmCall } from "../schemas/llm-call";
import type { PolicyAdmission, PolicySnapshot } from "../schemas/policy";
import { missingTrainingTokens } from "../schemas/training-tokens";
import type { Clock } from "../ports";
import { captureChatCompletion } from "./capture/chat-capture";
import type { CapturedOutput } from "./capture/captured-output";
import { captureCompletion } from "./capture/completion-capture";
import type { ModelBackend, UpstreamPath } from "./model-backend";
import type { PolicyPort } from "./policy-port";
import { type CallLimits, checkPromptLength, shapeRequest } from "./request-shaping";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, sleep, withRetries } from "./retry";
import { notInterruptibleBecause } from "./interruptible";
import { chatCompletionOf } from "./openai-chat";
import { resumableCall } from "./resumable-call";
import type { StreamSeed } from "./resumable-stream";
import type { ProgressSink } from "./stream-progress";
import { upstreamStopBody } from "./stop-relay";
import { stopOptionsOf } from "./stop-window";
import { relayStream } from "./stream-relay";
import { matchRequest, planTurn } from "./turns/token-exact-turn";
import {
  attemptTimeoutMs,
  DEFAULT_UPSTREAM_TIMEOUTS,
  type UpstreamTimeouts,
} from "./upstream-timeouts";

/** The policy in force when no policy object is wired (tests, or a deployment that never set one). */
export const DEFAULT_POLICY: PolicySnapshot = {
  policy_version: 0,
  model: null,
  backend: null,
  sampling: { temperature: 1, top_p: 1 },
};

/**
 * An in-flight admission expires after this long if its release never arrives (a dead
 * invocation), unless the call names its own bound (`admissionTtlMs`: the rollout's lease ttl).
 */
const DEFAULT_ADMISSION_TTL_MS = 15 * 60_000;

/** What the gateway is built from. */
export interface GatewayDeps {
  /** Null: no policy object (version 0, deployment defaults, never syncing). */
  policy: PolicyPort | null;
  /** The backend for a policy's backend config (null = the deployment default); reuse instances. */
  backendFor(config: BackendConfig | null): ModelBackend;
  defaultModel: string;
  retry?: RetryPolicy;
  /** Per-attempt upstream deadlines; default `DEFAULT_UPSTREAM_TIMEOUTS`. */
  timeouts?: UpstreamTimeouts;
  now: Clock;
}

/** One call: whose it is, its budgets, and how to behave during a weight sync. */
export interface GatewayCall {
  rolloutId: string;
  stepId: string | null;
  callId: string;
  /** Training mode: the policy's sampling parameters apply and logprobs are requested. */
  train: boolean;
  /** Another served model than the policy's (evaluation against a different checkpoint); null = the policy's. */
  model?: string | null;
  limits: CallLimits;
  /** The replica the rollout used last (kept while healthy). */
  replicaHint: string | null;
  signal?: AbortSignal;
  /** In-process callers wait a weight sync out; HTTP callers get 429 with Retry-After. */
  whileSyncing: "wait" | "refuse";
  /**
   * Told the policy a call was admitted under, before anything is sent upstream; may throw (the
   * staleness rule: a rollout too far behind that version ends instead), and the admission is then
   * released and the error passed on.
   */
  onAdmitted?: (policy: PolicySnapshot) => void;
  /** Told when the call starts and stops waiting for a sync (a step timer pauses meanwhile). */
  onSyncWait?: (waiting: boolean) => void;
  /**
   * Longest the call may count as in flight without a release: past it a weight sync stops
   * waiting for it (its invocation died). Default 15 minutes; callers pass the rollout's lease ttl.
   */
  admissionTtlMs?: number;
  /**
   * The call's admission, already asked for (the HTTP route starts it alongside the session's own
   * check, to save a round trip): used instead of the first `acquire`. Must be for this call's id.
   */
  admission?: Promise<PolicyAdmission>;
  /**
   * Keeps work alive that runs after the response is handed back (recording an aborted stream's
   * call and releasing its admission), e.g. `ExecutionContext.waitUntil`.
   */
  keepAlive?: (work: Promise<unknown>) => void;
  /**
   * Aborts when the caller of a streamed call has left, where that is known only from outside its
   * response stream (a session relaying to an HTTP route): the call then ends untrainable.
   */
  callerGone?: AbortSignal;
  /**
   * False when the caller wants only the record (a reply the session assembles from it): a
   * resumable stream then forwards no chunk, since buffering every token's event only to discard
   * it cost workerd CPU per call. Default true.
   */
  relay?: boolean;
  /**
   * Where a streamed plain call registers its interrupt while it runs (its session's registry, which
   * an `interrupt` weight sync reaches): such a call is cut, then resumed from token ids under the new
   * version. Absent: the call is never interrupted (a sync drains it).
   */
  interrupts?: (interrupt: (() => void) | null, legVersion?: number) => void;
  /**
   * A harness turn (src/gateway/turns/): the request's earlier turns are replaced by the gateway's
   * records, and when it continues `previous` (the rollout's last policy call) its prompt is built
   * from token ids. Non-streamed calls only.
   */
  turn?: { previous: LlmCall | null };
  /**
   * Where a resumable streamed call keeps what it received at a cadence (its session's flights), so
   * the call survives the session's restart (stream-progress.ts).
   */
  progress?: ProgressSink;
  /**
   * A resumable streamed call its session's restart cut, with what was kept of it: its chunks are
   * replayed and it continues from their token ids (no first request is sent). Ignored by a call
   * that cannot resume token-exactly, which runs whole again.
   */
  seed?: StreamSeed;
}

/** Routes, records and versions model calls for rollouts. */
export interface Gateway {
  /**
   * A non-streaming call: the upstream's JSON reply (to pass on unchanged; `replyText` is its text
   * as received when the backend kept it) and the call's record.
   */
  send(
    path: UpstreamPath,
    body: JsonObject,
    call: GatewayCall,
  ): Promise<{ reply: unknown; replyText?: string; call: LlmCall }>;
  /**
   * `send`, answering before the admission is released: the record's `policy_version_end` is the
   * version admitted, and `released` resolves with the version in force when the release landed.
   * The two differ only when a weight sync ended while the call ran (its wait for calls in flight
   * gave up), and the caller then corrects the record. Lets a caller record and release at once.
   */
  sendUnreleased(
    path: UpstreamPath,
    body: JsonObject,
    call: GatewayCall,
  ): Promise<{ reply: unknown; replyText?: string; call: LlmCall; released: Promise<number> }>;
  /**
   * A streaming call: the SSE response to hand to the caller unchanged. `record` is awaited with
   * the assembled call before the stream's final `[DONE]` goes out, so a caller that has read the
   * whole stream finds the call recorded. As with `sendUnreleased`, the admission is released
   * while `record` runs: the call's `policy_version_end` is the version admitted and `released`
   * (never rejecting) the version in force when the release landed, for the caller to correct the
   * record when they differ. The stream ends only after the release landed.
   */
  stream(
    path: UpstreamPath,
    body: JsonObject,
    call: GatewayCall,
    record: (call: LlmCall, released: Promise<number>) => Promise<void>,
  ): Promise<Response>;
  /** Sends the releases its policy port holds back (`PolicyPort.flush`), if it holds any. */
  flushReleases(): Promise<void>;
  /**
   * Whether no call of `rolloutId` this gateway admitted can still be counted at its shard (true
   * without admission; false when the policy port cannot tell).
   */
  releasedAll(rolloutId: string): boolean;
}

/**
 * Builds the gateway.
 *
 * @example
 * const gateway = createGateway({ policy: null, backendFor: () => backend, defaultModel: "sim-qwen3", now: Date.now });
 */
export function createGateway(deps: GatewayDeps): Gateway {
  const retry = deps.retry ?? DEFAULT_RETRY_POLICY;

  async function admit(call: GatewayCall): Promise<PolicySnapshot> {
    if (!deps.policy) return DEFAULT_POLICY;
    let waiting = false;
    let asked = call.admission;
    for (;;) {
      const admission = await (asked ??
        deps.policy.acquire(
          call.rolloutId,
          call.callId,
          call.admissionTtlMs ?? DEFAULT_ADMISSION_TTL_MS,
        ));
      asked = undefined;
      if (admission.ok) {
        if (waiting) call.onSyncWait?.(false);
        return admission;
      }
      if (call.whileSyncing === "refuse") throw new PolicySyncingError(admission.retry_after_s);
      if (!waiting) call.onSyncWait?.(true);
      waiting = true;
      await sleep(admission.retry_after_s * 1000, call.signal);
    }
  }

  /** Releases the admission once, reporting the version in force when the call ended. */
  function releaser(call: GatewayCall, admitted: PolicySnapshot): () => Promise<number> {
    let released: Promise<number> | undefined;
    return () =>
      (released ??= deps.policy
        ? deps.policy.release(call.rolloutId, call.callId).then(
            (r) => r.policy_version,
            () => admitted.policy_version,
          )
        : Promise.resolve(admitted.policy_version));
  }

  async function prepare(path: UpstreamPath, body: JsonObject, call: GatewayCall) {
    const policy = await admit(call);
    const release = releaser(call, policy);
    try {
      call.onAdmitted?.(policy);
      const backend = deps.backendFor(policy.backend);
      const shaped = shapeRequest(
        path,
        body,
        call.model ? { ...policy, model: call.model } : policy,
        { defaultModel: deps.defaultModel, train: call.train, limits: call.limits },
      );
      const routing = {
        rolloutId: call.rolloutId,
        replicaHint: call.replicaHint,
        headers: { [SAMPLE_KEY_HEADER]: sampleKeyOf(call.rolloutId) },
        signal: call.signal,
        attemptTimeoutMs: attemptTimeoutMs(deps.timeouts ?? DEFAULT_UPSTREAM_TIMEOUTS, shaped),
      };
      await checkPromptLength(path, shaped, call.limits, backend, routing);
      return { policy, release, backend, shaped, routing, started: deps.now() };
    } catch (error) {
      await release();
      throw error;
    }
  }

  /**
   * The call's record, every field set. Its parts were validated on the way in (the reply by the
   * capture schemas); the session validates the whole record where it is stored.
   */
  function record(
    call: GatewayCall,
    prepared: Awaited<ReturnType<typeof prepare>>,
    captured: CapturedOutput,
    meta: { replica: string; attempts: number; versionEnd: number },
  ): LlmCall {
    return {
      schema_version: LLM_CALL_SCHEMA_VERSION,
      call_id: call.callId,
      rollout_id: call.rolloutId,
      step_id: call.stepId,
      request: prepared.shaped,
      ...captured,
      logprobs_mode: captured.logprobs.length > 0 ? "raw_logprobs" : "none",
      backend: prepared.backend.name,
      replica: meta.replica,
      policy_version_start: prepared.policy.policy_version,
      policy_version_end: meta.versionEnd,
      latency_ms: deps.now() - prepared.started,
      attempts: meta.attempts,
      trainable: prepared.backend.returnsTokenIds && missingTrainingTokens(captured) === null,
      created_at: prepared.started,
      attempt: null,
      excluded_from_training: false,
      purpose: "policy",
    };
  }

  /** A non-streaming call up to its captured reply; released here only when it fails. */
  async function complete(path: UpstreamPath, body: JsonObject, call: GatewayCall) {
    const match =
      call.turn && path === "/chat/completions" ? matchRequest(call.turn.previous, body) : null;
    const sent: JsonObject = match ? { ...body, messages: match.messages as JsonObject[] } : body;
    const prepared = await prepare(path, { ...sent, stream: false }, call);
    try {
      const plan = match
        ? await planTurn(
            prepared.shaped,
            match,
            call.turn!.previous,
            prepared.backend,
            prepared.routing,
            call.callId,
          )
        : null;
      const capture =
        plan?.capture ?? (path === "/chat/completions" ? captureChatCompletion : captureCompletion);
      const { value, attempts } = await withRetries(retry, call.signal, async () => {
        const reply = await prepared.backend.request(
          plan?.path ?? path,
          plan?.body ?? prepared.shaped,
          prepared.routing,
        );
        return { reply, captured: capture(reply.body) };
      });
      const recorded = (versionEnd: number): LlmCall => ({
        ...record(call, prepared, value.captured, {
          replica: value.reply.replica,
          attempts,
          versionEnd,
        }),
        ...(plan ? { continuation: plan.note } : {}),
      });
      // A turn sent from token ids answers with the chat reply its record makes (the upstream's was a text completion).
      const reply =
        plan?.path === "/completions"
          ? { reply: chatCompletionOf(recorded(prepared.policy.policy_version)) }
          : {
              reply: value.reply.body,
              ...(value.reply.text === undefined ? {} : { replyText: value.reply.text }),
            };
      return { prepared, reply, recorded };
    } catch (error) {
      await prepared.release();
      throw error;
    }
  }

  async function sendUnreleased(path: UpstreamPath, body: JsonObject, call: GatewayCall) {
    const { prepared, reply, recorded } = await complete(path, body, call);
    return {
      ...reply,
      call: recorded(prepared.policy.policy_version),
      released: prepared.release(),
    };
  }

  return {
    async send(path, body, call) {
      const { released, call: record, ...reply } = await sendUnreleased(path, body, call);
      const versionEnd = await released;
      return {
        ...reply,
        call:
          versionEnd === record.policy_version_end
            ? record
            : { ...record, policy_version_end: versionEnd },
      };
    },

    sendUnreleased,

    async flushReleases() {
      await deps.policy?.flush?.();
    },

    releasedAll(rolloutId) {
      return deps.policy === null ? true : (deps.policy.releasedAll?.(rolloutId) ?? false);
    },

    async stream(path, body, call, onRecorded) {
      const prepared = await prepare(path, { ...body, stream: true }, call);
      // Once open, the upstream stream is the call's, not the caller's: the caller's signal stops
      // the admission wait and the retries, never the read (stream-relay.ts reads it to its end).
      const routing = { ...prepared.routing, signal: undefined };
      const notInterruptible = notInterruptibleBecause(path, prepared.shaped);
      const resumable =
        call.interrupts !== undefined &&
        notInterruptible === null &&
        prepared.backend.returnsTokenIds;
      // A resumable call's stop strings are checked by the gateway across cuts: upstream sends them in the output (stop-relay.ts).
      const upstream = resumable
        ? upstreamStopBody(prepared.shaped, stopOptionsOf(prepared.shaped))
        : prepared.shaped;
      // A seeded call opens nothing here: its continuation is opened by the resumable stream.
      const seeded = resumable && call.seed !== undefined;
      let opened: Awaited<ReturnType<typeof openFirst>> | null = null;
      function openFirst() {
        return withRetries(retry, call.signal, () =>
          prepared.backend.openStream(path, upstream, routing),
        );
      }
      try {
        if (!seeded) opened = await openFirst();
      } catch (error) {
        await prepared.release();
        throw error;
      }
      if (resumable && call.interrupts) {
        const parts = {
          rolloutId: call.rolloutId,
          callId: call.callId,
          shaped: prepared.shaped,
          routing,
          backend: prepared.backend,
          policy: deps.policy,
          retry,
          admissionTtlMs: call.admissionTtlMs ?? DEFAULT_ADMISSION_TTL_MS,
          version: prepared.policy.policy_version,
          release: prepared.release,
          interrupts: call.interrupts,
          ...(call.onSyncWait ? { onSyncWait: call.onSyncWait } : {}),
        };
        return resumableCall(
          { ...parts, record: (captured, meta) => record(call, prepared, captured, meta) },
          opened?.value ?? null,
          opened?.attempts ?? 0,
          onRecorded,
          {
            ...(call.keepAlive ? { keepAlive: call.keepAlive } : {}),
            ...(call.callerGone ? { callerGone: call.callerGone } : {}),
            ...(call.relay === false ? { relay: false } : {}),
            ...(call.progress ? { progress: call.progress } : {}),
            ...(seeded ? { seed: call.seed } : {}),
          },
        );
      }
      const { value, attempts } = opened!;
      const drained = call.interrupts
        ? {
            interruption: {
              interruptible: false,
              reason: notInterruptible ?? "the backend returns no token ids",
              interrupted: 0,
            },
          }
        : {};
      // The call's own deadline: what a non-streamed reply of the same max_tokens may take.
      const deadlineMs = attemptTimeoutMs(deps.timeouts ?? DEFAULT_UPSTREAM_TIMEOUTS, {
        ...prepared.shaped,
        stream: false,
      });
      return relayStream(
        value.response,
        async (end) => {
          const released = prepared.release();
          if (!end.captured) return void (await released);
          const recorded = {
            ...record(call, prepared, end.captured, {
              replica: value.replica,
              attempts,
              versionEnd: prepared.policy.policy_version,
            }),
            ...drained,
          };
          try {
            // An aborted call is kept (its tokens were spent) but can never train: its output is cut off.
            await onRecorded(
              end.outcome === "aborted" ? { ...recorded, trainable: false } : recorded,
              released,
            );
          } finally {
            await released;
          }
        },
        {
          keepAlive: call.keepAlive,
          deadlineMs,
          ...(call.callerGone ? { callerGone: call.callerGone } : {}),
        },
      );
    },
  };
}
