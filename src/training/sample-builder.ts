/**
 * @module Cutting token-exact training samples from a rollout's recorded LLM calls.
 *
 * Every token of a sample is copied from a recorded call (`prompt_token_ids`,
 * `completion_token_ids`); nothing is re-tokenized. In `cumulative` mode consecutive calls are
 * merged while each call's prompt extends the previous call's prompt + completion (an
 * append-only chat template); where it does not (a template that re-renders history, such as
 * Qwen3 dropping `<think>` from earlier turns) a new sample starts and a drift split is counted.
 */
import type { LlmCall } from "../schemas/llm-call";
import type { RolloutView } from "../schemas/rollout-api";
import type { RolloutTree } from "../schemas/rollout-tree";
import type { OnlineFields } from "../schemas/online";
import type { TerminationReason, RolloutStatus } from "../schemas/termination";
import { TRAINING_SAMPLE_SCHEMA_VERSION, type TrainingSample } from "../schemas/training-sample";
import { missingTrainingTokens } from "../schemas/training-tokens";

/** What the builder needs to know about one finished rollout. */
export interface SampleBuildInput {
  rollout_id: string;
  status: RolloutStatus;
  termination_reason: TerminationReason | null;
  reward: number | null;
  /** Calls in the order they were made. */
  calls: LlmCall[];
  uid: string;
  sample_index: number;
  mode: "cumulative" | "per_call";
  /** A forked rollout's place in its tree: its calls copied from the parent (`forked_from`) are context unless `train_shared_prefix`. */
  tree?: RolloutTree | null;
  /** An online session's application, version and feedback (`extra_fields.online`, docs/online.md). */
  online?: OnlineFields | null;
}

/** The samples and how many times the prefix broke. */
export interface SampleBuildResult {
  samples: TrainingSample[];
  drift_splits: number;
}

/** Termination reasons that cut a trajectory short without an error (rLLM's overlong filter masks these). */
const TRUNCATING_REASONS: ReadonlySet<TerminationReason> = new Set([
  "MAX_STEPS",
  "MAX_PROMPT_LENGTH",
  "MAX_RESPONSE_LENGTH",
]);

/**
 * Why a call cannot be trained on, or null when it can: excluded by the rollout, recorded as
 * untrainable by the gateway, or lacking the tokens `missingTrainingTokens` asks for (an `openai`
 * backend, validation mode). Such a call is skipped, never filled in. This is the one place to
 * exclude more calls.
 */
export function untrainableReason(call: LlmCall): string | null {
  // A retried attempt's calls stay recorded but never train: only the final attempt's do.
  // A grader's judge call is recorded for inspection, never trained on, whatever its attempt.
  if (call.purpose === "judge") return "judge_call";
  // A harness's side call (a title, a small-model check) is another conversation beside its loop.
  if (call.purpose === "side") return "side_call";
  if (call.excluded_from_training) return "abandoned_attempt";
  if (!call.trainable) return "untrainable";
  return missingTrainingTokens(call);
}

/** A sample being assembled: the first call's prompt, then everything after it. */
interface Segment {
  prompt_ids: number[];
  response_ids: number[];
  response_mask: Array<0 | 1>;
  response_logprobs: number[];
  /** The policy version of each response token (context tokens take the version of the call they lead into). */
  response_versions: number[];
  calls: LlmCall[];
}

function push<T>(target: T[], items: readonly T[]): void {
  // A loop, not push(...items): a long response would overflow the call stack.
  for (const item of items) target.push(item);
}

/** The mask of a call's completion tokens: 1, or 0 for a forked rollout's shared prefix (the parent's samples train those). */
type CompletionMask = (call: LlmCall) => 0 | 1;

function startSegment(call: LlmCall, maskOf: CompletionMask): Segment {
  const segment: Segment = {
    prompt_ids: [...call.prompt_token_ids],
    response_ids: [],
    response_mask: [],
    response_logprobs: [],
    response_versions: [],
    calls: [],
  };
  appendCompletion(segment, call, maskOf);
  return segment;
}

function appendCompletion(segment: Segment, call: LlmCall, maskOf: CompletionMask): void {
  const mask = maskOf(call);
  push(segment.response_ids, call.completion_token_ids);
  // A call an interrupting sync cut has runs of versions; any other call's tokens all came from the version it was admitted under.
  const runs = call.policy_version_runs ?? [
    { from_token: 0, policy_version: call.policy_version_start },
  ];
  let run = 0;
  for (let i = 0; i < call.completion_token_ids.length; i++) {
    while (run + 1 < runs.length && runs[run + 1]!.from_token <= i) run += 1;
    segment.response_mask.push(mask);
    // The engine's logprob even under mask 0: a shared prefix keeps the parent's numbers exactly.
    segment.response_logprobs.push(call.logprobs[i]!);
    segment.response_versions.push(runs[run]!.policy_version);
  }
  segment.calls.push(call);
}

/** The oldest and newest version a token of the segment came from (a call's start version when it has no runs). */
function versionRange(segment: Segment): { start: number; end: number } {
  return {
    start: Math.min(...segment.calls.map((call) => call.policy_version_start)),
    end: Math.max(
      ...segment.calls.map((call) =>
        Math.max(
          call.policy_version_end,
          ...(call.policy_version_runs ?? []).map((r) => r.policy_version),
        ),
      ),
    ),
  };
}

/** True when `prompt` starts with the segment's prompt ids followed by its response ids. */
function extendsSegment(segment: Segment, prompt: readonly number[]): boolean {
  const { prompt_ids: head, response_ids: tail } = segment;
  if (prompt.length < head.length + tail.length) return false;
  for (let i = 0; i < head.length; i++) if (prompt[i] !== head[i]) return false;
  for (let i = 0; i < tail.length; i++) if (prompt[head.length + i] !== tail[i]) return false;
  return true;
}

/** Appends the tokens between the segment's end and `call`'s completion (mask 0, logprob 0.0), then the completion. */
function mergeCall(segment: Segment, call: LlmCall, maskOf: CompletionMask): void {
  const between = call.prompt_token_ids.slice(
    segment.prompt_ids.length + segment.response_ids.length,
  );
  push(segment.response_ids, between);
  for (let i = 0; i < between.length; i++) {
    segment.response_mask.push(0);
    segment.response_logprobs.push(0);
    segment.response_versions.push(call.policy_version_start);
  }
  appendCompletion(segment, call, maskOf);
}

/** Groups the trainable calls into segments and counts the prefix breaks. */
function segmentCalls(
  calls: readonly LlmCall[],
  mode: SampleBuildInput["mode"],
  maskOf: CompletionMask,
): { segments: Segment[]; drift_splits: number } {
  const segments: Segment[] = [];
  let drift_splits = 0;
  let current: Segment | null = null;
  for (const call of calls) {
    if (current && mode === "cumulative" && extendsSegment(current, call.prompt_token_ids)) {
      mergeCall(current, call, maskOf);
      continue;
    }
    if (current && mode === "cumulative") drift_splits += 1;
    current = startSegment(call, maskOf);
    segments.push(current);
  }
  return { segments, drift_splits };
}

/** Why the sample is truncated (a MAX_* ending, or its last call stopped at `max_tokens`), or null. */
function truncationOf(input: SampleBuildInput, segment: Segment): string | null {
  if (input.termination_reason && TRUNCATING_REASONS.has(input.termination_reason))
    return input.termination_reason;
  return segment.calls.at(-1)?.finish_reason === "length" ? "length" : null;
}

/**
 * Builds the training samples of one rollout.
 *
 * - `cumulative` (default): one sample per run of calls whose prompts extend each other; the
 *   completions are mask 1 with their logprobs, the tokens in between (tool results, environment
 *   text, template glue) mask 0 with logprob 0.0. A prefix break closes the sample and counts a
 *   drift split.
 * - `per_call`: one sample per trainable call (its prompt; its completion, mask all 1); a forked
 *   rollout's calls copied from its parent make none unless `train_shared_prefix`.
 *
 * Untrainable calls (see `untrainableReason`) are skipped and counted; a later call's prompt still
 * carries their tokens, which then appear as mask-0 context. Failed, cancelled and truncated
 * rollouts still yield samples, flagged in `extra_fields` so a trainer can mask them:
 *
 * - `trainable`: false when the sample should be masked by default (failed or truncated);
 * - `failed`: the rollout failed or was cancelled; `truncated` (+ `truncated_by`): it ended on a
 *   MAX_* limit, or the sample's last call stopped with finish_reason "length";
 * - `drift_splits`, `untrainable_calls`, `segments`: rollout totals; `calls`: this sample's call ids;
 * - `reward_missing`: the rollout has no reward, so `reward_score` is 0.0;
 * - `tree` (forked rollouts only): `{root, parent, branch_step, path, branch_index, train_shared_prefix}`;
 *   the completions of calls copied from the parent (`forked_from`) are mask 0 unless
 *   `train_shared_prefix`, with the parent's logprobs, so a tree's shared prefix is trained once.
 *
 * `num_turns` counts the model calls (assistant turns) merged into the sample. verl's multi-turn
 * agent loop counts user and assistant messages; we count calls because a sample is cut from
 * calls and a call is what the policy generated.
 *
 * @example
 * const { samples, drift_splits } = buildTrainingSamples({ rollout_id, status, termination_reason, reward, calls: view.llm_calls, uid, sample_index: 0, mode: "cumulative" });
 */
export function buildTrainingSamples(input: SampleBuildInput): SampleBuildResult {
  const trainable = input.calls.filter((call) => untrainableReason(call) === null);
  const untrainableCalls = input.calls.length - trainable.length;
  const tree = input.tree ?? null;
  const maskOf: CompletionMask = (call) =>
    call.forked_from !== undefined && !tree?.train_shared_prefix ? 0 : 1;
  // Per call, a shared call's sample would be all context: the parent's own sample is that call.
  const sampled =
    input.mode === "per_call" ? trainable.filter((call) => maskOf(call) === 1) : trainable;
  const { segments, drift_splits } = segmentCalls(sampled, input.mode, maskOf);
  const failed = input.status === "failed" || input.status === "cancelled";
  const samples = segments.map((segment, segmentIndex) => {
    const truncatedBy = truncationOf(input, segment);
    // Built, not parsed: every field is typed here and copied from calls validated when they were
    // stored, and TrainingSample.parse of each sample was a measured part of publication's CPU in
    // workerd (zod runs interpreted there). The one invariant types cannot state is checked below.
    const sample: TrainingSample = {
      schema_version: TRAINING_SAMPLE_SCHEMA_VERSION,
      uid: input.uid,
      sample_index: input.sample_index,
      rollout_id: input.rollout_id,
      segment_index: segmentIndex,
      prompt_ids: segment.prompt_ids,
      response_ids: segment.response_ids,
      response_mask: segment.response_mask,
      response_logprobs: segment.response_logprobs,
      reward_score: input.reward ?? 0,
      num_turns: segment.calls.length,
      termination_reason: input.termination_reason,
      policy_version: versionRange(segment),
      // Only when the tokens span versions: absent, every token came from `policy_version.start`.
      ...(new Set(segment.response_versions).size > 1
        ? { response_policy_versions: segment.response_versions }
        : {}),
      extra_fields: {
        trainable: !failed && truncatedBy === null,
        failed,
        truncated: truncatedBy !== null,
        truncated_by: truncatedBy,
        status: input.status,
        sample_mode: input.mode,
        drift_splits,
        untrainable_calls: untrainableCalls,
        segments: segments.length,
        calls: segment.calls.map((call) => call.call_id),
        ...(input.reward === null ? { reward_missing: true } : {}),
        ...(tree ? { tree: treeFields(tree) } : {}),
        // The behaviour policy of an online sample is its serving version, and its logprobs are
        // response_logprobs: what an importance correction needs once training has moved on.
        ...(input.online
          ? { online: { ...input.online, behaviour_version: input.online.version } }
          : {}),
      },
    };
    return checkedLengths(sample);
  });
  return { samples, drift_splits };
}

/** `sample`, once its per-token arrays are as long as its response (what TrainingSample's refinement checks); a builder bug throws. */
function checkedLengths(sample: TrainingSample): TrainingSample {
  const n = sample.response_ids.length;
  const versions = sample.response_policy_versions;
  if (
    sample.response_mask.length !== n ||
    sample.response_logprobs.length !== n ||
    (versions !== undefined && versions.length !== n)
  )
    throw new Error(
      `sample ${sample.rollout_id}/${sample.segment_index}: per-token arrays differ in length from response_ids (${n})`,
    );
  return sample;
}

/** What a forked rollout's samples say about its tree (`extra_fields.tree`). */
function treeFields(tree: RolloutTree): Record<string, string | number | boolean | string[]> {
  return {
    root: tree.root,
    parent: tree.parent,
    branch_step: tree.branch_step,
    path: tree.path,
    branch_index: tree.branch_index,
    train_shared_prefix: tree.train_shared_prefix,
  };
}

/** The samples of a finished rollout's view, as the sink publishes them. */
export function buildSamplesForView(
  view: Pick<
    RolloutView,
    "rollout_id" | "status" | "termination_reason" | "reward" | "llm_calls" | "config"
  > & { tree?: RolloutView["tree"]; online?: RolloutView["online"] },
  group: { uid: string; sample_index: number },
): SampleBuildResult {
  return buildTrainingSamples({
    rollout_id: view.rollout_id,
    status: view.status,
    termination_reason: view.termination_reason,
    reward: view.reward,
    calls: view.llm_calls,
    uid: group.uid,
    sample_index: group.sample_index,
    mode: view.config.sample_mode,
    tree: view.tree ?? null,
    online: view.online ?? null,
  });
}
