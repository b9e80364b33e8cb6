/**
 * @module The gateway's side of a resumable call: admitting the continuation once a sync ends,
 * opening it from token ids, and recording the whole call with the version of each token run.
 */
import { ModelError } from "../errors";
import type { JsonObject } from "../schemas/json";
import type { LlmCall } from "../schemas/llm-call";
import type { CapturedOutput } from "./capture/captured-output";
import { withCacheSalt } from "./cache-salt";
import { continuationBody, type VersionRun } from "./interruptible";
import type { BackendCallOptions, ModelBackend } from "./model-backend";
import type { PolicyPort } from "./policy-port";
import { resumableStream, type StreamSeed } from "./resumable-stream";
import type { ProgressSink } from "./stream-progress";
import { upstreamStopBody } from "./stop-relay";
import { stopOptionsOf } from "./stop-window";
import { type RetryPolicy, sleep, withRetries } from "./retry";

/** What a resumable call is made of (the gateway's prepared call). */
export interface ResumableParts {
  rolloutId: string;
  callId: string;
  shaped: JsonObject;
  routing: BackendCallOptions;
  backend: ModelBackend;
  policy: PolicyPort | null;
  retry: RetryPolicy;
  admissionTtlMs: number;
  /** The first admission's version and its release. */
  version: number;
  release: () => Promise<number>;
  /** Told while the cut call waits for the sync to end (a stepwise driver's step timer pauses meanwhile). */
  onSyncWait?: (waiting: boolean) => void;
  /** Where the call's interrupt is registered (the session's, so a sync reaches it). */
  interrupts: (interrupt: (() => void) | null, legVersion?: number) => void;
  record(
    captured: CapturedOutput,
    meta: { replica: string; attempts: number; versionEnd: number },
  ): LlmCall;
}

/**
 * Relays `first` and every continuation to the caller; `onRecorded` gets the whole call before
 * `[DONE]`. With `options.seed` (a call its owner's restart cut) `first` is null: the kept chunks
 * are replayed and the call continues from their ids.
 */
export function resumableCall(
  parts: ResumableParts,
  first: { response: Response; replica: string } | null,
  attempts: number,
  onRecorded: (call: LlmCall, released: Promise<number>) => Promise<void>,
  options: {
    keepAlive?: (work: Promise<unknown>) => void;
    callerGone?: AbortSignal;
    relay?: boolean;
    progress?: ProgressSink;
    seed?: StreamSeed;
  },
): Response {
  let release = parts.release;
  let replica = first?.replica ?? "";
  let tries = attempts;
  const maxTokens = typeof parts.shaped.max_tokens === "number" ? parts.shaped.max_tokens : 0;
  // Stop strings are checked by the gateway across cuts; every leg asks for them in the output (stop-relay.ts).
  const stops = stopOptionsOf(parts.shaped);
  const includeUsage =
    (parts.shaped.stream_options as { include_usage?: unknown } | undefined)?.include_usage ===
    true;

  async function admit(): Promise<number> {
    if (!parts.policy) return parts.version;
    let waiting = false;
    try {
      for (;;) {
        const admission = await parts.policy.acquire(
          parts.rolloutId,
          parts.callId,
          parts.admissionTtlMs,
        );
        if (admission.ok) return admission.policy_version;
        // The sync that cut the call is still under way: wait it out, as an in-process caller does.
        if (!waiting) parts.onSyncWait?.((waiting = true));
        await sleep(admission.retry_after_s * 1000);
      }
    } finally {
      if (waiting) parts.onSyncWait?.(false);
    }
  }

  return resumableStream(
    first?.response ?? null,
    parts.version,
    {
      release: () => release(),
      onInterrupt: parts.interrupts,
      async resume(promptIds, generated) {
        const version = await admit();
        let released: Promise<number> | undefined;
        release = () =>
          (released ??= parts.policy
            ? parts.policy.release(parts.rolloutId, parts.callId).then(
                (r) => r.policy_version,
                () => version,
              )
            : Promise.resolve(version));
        if (maxTokens > 0 && generated.length >= maxTokens) return "length";
        // Cut before its first chunk: nothing was generated, so the call itself starts again.
        const restarted = promptIds.length === 0;
        try {
          // The new leg runs under `version`: its own cache salt, so no KV of the old weights is reused.
          const leg = (body: JsonObject) =>
            upstreamStopBody(withCacheSalt(body, version, null), stops);
          const { value, attempts: more } = await withRetries(parts.retry, undefined, () =>
            restarted
              ? parts.backend.openStream("/chat/completions", leg(parts.shaped), parts.routing)
              : parts.backend.openStream(
                  "/completions",
                  leg(continuationBody(parts.shaped, promptIds, generated)),
                  parts.routing,
                ),
          );
          replica = value.replica;
          tries += more;
          return { response: value.response, version, restarted };
        } catch (error) {
          // The server refused the longer prompt (over its context window): the call ends `length`, never retried.
          if (error instanceof ModelError && error.status >= 400 && error.status < 500)
            return "length";
          throw error;
        }
      },
    },
    async (end) => {
      const released = release();
      if (!end.captured) return void (await released);
      const recorded = parts.record(end.captured, {
        replica,
        attempts: tries,
        versionEnd: end.runs[end.runs.length - 1]!.policy_version,
      });
      const runs: VersionRun[] = end.runs;
      const call: LlmCall = {
        ...recorded,
        policy_version_runs: runs,
        interruption: { interruptible: true, reason: null, interrupted: end.interrupted },
        ...(end.outcome === "aborted" ? { trainable: false } : {}),
      };
      try {
        await onRecorded(call, released);
      } finally {
        await released;
      }
    },
    { ...options, ...(stops ? { stops: { options: stops, includeUsage } } : {}) },
  );
}
