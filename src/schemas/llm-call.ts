/** @module One model call as the inference engine saw it: token ids in, token ids and logprobs out. */
import { z } from "zod";
import { ChatMessage } from "./chat";
import { logprobsAligned } from "./training-tokens";

/**
 * Request header an attempt's own `fetch` puts on its gateway calls: the attempt number, so a call
 * that completes after its attempt was given up is still recorded under that attempt.
 */
export const ATTEMPT_HEADER = "x-edge-rollout-attempt";

/**
 * Request header that marks a call as a judge call (`judge`): a grader's LLM-as-a-judge call,
 * recorded with the rollout but never trained on. Absent = a policy call.
 */
export const PURPOSE_HEADER = "x-edge-rollout-purpose";

/**
 * The header a client names its call with (made by the client, the same on every retry of the
 * call): a retry after the rollout's session restarted attaches to the call, which ran on, and
 * a retry of a call already recorded reads its answer again instead of generating anew. Every
 * gateway answer carries the call's id in it. 1-128 characters of `A-Za-z0-9._:-`.
 */
export const CALL_ID_HEADER = "x-edge-rollout-call-id";

/** A client's name for its call (see `CALL_ID_HEADER`). */
export const ClientCallId = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, {
  message: "must be 1-128 characters of A-Z a-z 0-9 . _ : -",
});

/**
 * Why a call was made: the policy acting (`policy`, trainable), a grader judging (`judge`), or a
 * harness's side call beside its loop (`side`: opencode's title, a small-model call); the last two
 * are recorded and never trained on.
 */
export const CallPurpose = z.enum(["policy", "judge", "side"]);
export type CallPurpose = z.infer<typeof CallPurpose>;

/** Version of the persisted LlmCall shape. */
export const LLM_CALL_SCHEMA_VERSION = 1;

/** Token accounting as OpenAI and vLLM report it. */
export const Usage = z.looseObject({
  prompt_tokens: z.int().min(0),
  completion_tokens: z.int().min(0),
  total_tokens: z.int().min(0),
});
export type Usage = z.infer<typeof Usage>;

/**
 * Token ids: one pass over the array. A per-element zod schema costs far more, and inside workerd
 * (no code generation) zod's slow path made validating a call's ids the hottest part of a step.
 */
export const TokenIds = z.custom<number[]>(
  (value) => Array.isArray(value) && value.every((id) => Number.isSafeInteger(id) && id >= 0),
  "must be an array of non-negative integer token ids",
);

/** Logprobs: finite numbers, checked in one pass for the same reason as token ids. */
export const Logprobs = z.custom<number[]>(
  (value) =>
    Array.isArray(value) && value.every((x) => typeof x === "number" && Number.isFinite(x)),
  "must be an array of finite numbers",
);

/** Token strings: one pass over the array, for the same reason as token ids. */
export const TokenStrings = z.custom<string[]>(
  (value) => Array.isArray(value) && value.every((token) => typeof token === "string"),
  "must be an array of strings",
);

/**
 * A call's request body: an object, checked in one test rather than key by key (z.record ran its
 * key and value schemas for every entry of every call committed, in interpreted zod).
 */
const RequestBody = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  "must be an object (the body sent upstream)",
);

/** Which logprobs the engine returned: vLLM's modes, or none (a backend without logprobs). */
export const LogprobsMode = z.enum(["raw_logprobs", "processed_logprobs", "none"]);
export type LogprobsMode = z.infer<typeof LogprobsMode>;

/**
 * One recorded model call. `prompt_token_ids`/`completion_token_ids` are the engine's own ids
 * (never re-tokenized text); `logprobs` has one entry per completion token, or is empty when the
 * backend gave none (then `trainable` is false).
 */
export const LlmCall = z
  .object({
    schema_version: z.literal(LLM_CALL_SCHEMA_VERSION).default(LLM_CALL_SCHEMA_VERSION),
    call_id: z.string().min(1),
    rollout_id: z.string().min(1),
    step_id: z.string().nullable().default(null),
    /**
     * The body sent upstream. Checked to be an object only: it is what the gateway itself built and
     * serialized, and walking the whole conversation on every write was a measured hot spot.
     */
    request: RequestBody,
    response_message: ChatMessage,
    prompt_token_ids: TokenIds,
    completion_token_ids: TokenIds,
    logprobs: Logprobs,
    /**
     * The engine's text of each completion token (vLLM's logprob `token`, the token decoded alone:
     * U+FFFD for part of a character), one per completion token; absent when the engine sent none.
     * For people (the dashboard's token strip); training reads only the ids.
     */
    completion_token_strs: TokenStrings.optional(),
    logprobs_mode: LogprobsMode,
    finish_reason: z.string().nullable(),
    /** vLLM's `stop_reason`: the stop string (or stop token id) that ended the output; absent when none did (EOS, length). */
    stop_reason: z.union([z.string(), z.int()]).optional(),
    usage: Usage,
    backend: z.string(),
    replica: z.string(),
    policy_version_start: z.int().min(0).default(0),
    policy_version_end: z.int().min(0).default(0),
    /** Milliseconds from the first upstream attempt to the captured reply (the policy admission before it and the release after it are not included). */
    latency_ms: z.number().min(0),
    /** Upstream tries the gateway needed for this call (transport retries), not the rollout's attempt. */
    attempts: z.int().min(1).default(1),
    trainable: z.boolean(),
    created_at: z.number(),
    /**
     * Which attempt of the rollout made the call (function, LitAgent and workflow agents run as
     * numbered attempts, from 1); null for stepwise and external rollouts, which have no attempts.
     */
    attempt: z.int().min(1).nullable().default(null),
    /**
     * True when the call belongs to an attempt other than the one whose outcome the rollout reports
     * (a crashed or abandoned attempt that was retried). Such calls stay recorded for inspection
     * but must never enter a training sample. Computed when the rollout is read; stored as false.
     */
    excluded_from_training: z.boolean().default(false),
    /** `judge` for a grader's calls (`PURPOSE_HEADER`): recorded apart, never a step, never trained on. Rows stored before read as `policy`. */
    purpose: CallPurpose.default("policy"),
    /**
     * The policy version that produced each completion token, as runs: tokens from `from_token` on
     * (up to the next run) came from `policy_version`. Set on calls an interrupting weight sync may
     * cut; absent: every token came from `policy_version_start`.
     */
    policy_version_runs: z
      .array(z.object({ from_token: z.int().min(0), policy_version: z.int().min(0) }))
      .min(1)
      .optional(),
    /**
     * Partial rollouts: whether an `interrupt` sync may cut the call (else it is drained, and `reason`
     * says why: tools, response_format, penalties, seed, …) and how often one did. Absent on calls
     * made outside a rollout's gateway endpoint.
     */
    interruption: z
      .object({
        interruptible: z.boolean(),
        reason: z.string().nullable(),
        interrupted: z.int().min(0),
      })
      .optional(),
    /**
     * The call's owner (its rollout's session object) was restarted while it ran (a deploy, a
     * runtime update, a crash). `resumed: "token_ids"`: it went on from the `kept_tokens` it had
     * kept (the cut tokens after them, at most `regenerated_tokens_max`, were generated again);
     * `"whole"`: it could not resume token-exactly (`reason`: tools, response_format, …, or
     * nothing kept yet) and ran again from its start (`regenerated_tokens_max` null: what it had
     * generated before was not kept, so it is not known).
     */
    restart: z
      .object({
        restarts: z.int().min(1),
        resumed: z.enum(["token_ids", "whole"]),
        kept_tokens: z.int().min(0),
        regenerated_tokens_max: z.int().min(0).nullable(),
        reason: z.string().nullable(),
      })
      .optional(),
    /**
     * Tree rollouts: the id of the parent's call this one copies (the shared prefix of a fork, made
     * by the parent, not by this rollout: same token ids, logprobs and messages). Absent on calls
     * the rollout made itself.
     */
    forked_from: z.string().min(1).optional(),
    /**
     * Harness turns (src/gateway/turns/): whether the prompt was built from the previous call's
     * token ids (`token_exact`, and what identified the previous answer), or rendered whole, and
     * why (the first call, a template that rewrote history, a conversation that changed).
     */
    continuation: z
      .object({
        token_exact: z.boolean(),
        via: z.enum(["call_ref", "tool_call_ids", "content"]).optional(),
        reason: z.string().optional(),
      })
      .optional(),
  })
  .refine((call) => call.logprobs.length === 0 || logprobsAligned(call), {
    message: "logprobs must have one entry per completion token",
    path: ["logprobs"],
  });
export type LlmCall = z.infer<typeof LlmCall>;
/** An LlmCall before defaults are applied. */
export type LlmCallInput = z.input<typeof LlmCall>;
