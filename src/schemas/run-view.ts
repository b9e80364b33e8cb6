/**
 * @module What the run view (`GET /v1/runs/:series`, the dashboard's `/runs/:series`) and the
 * group view (`GET /v1/groups/:uid`, `/groups/:uid`) answer.
 */
import { z } from "zod";
import { BatchProgress } from "./batch";
import { MemberOutcome } from "./member-outcome";
import { SlotStatus } from "./batch-listing";
import { TerminationReason } from "./termination";

/**
 * What the trainer reports of one batch it trained on (`PUT /v1/batches/:id/trainer-report`): the
 * agreement between the log-probs the gateway recorded and its own recompute under the same
 * weights, the responses whose tokens came from two policy versions, the tokens whose recorded
 * version did not reproduce them, and the loss. Only the trainer knows these; the run view shows them.
 */
export const TrainerReport = z.strictObject({
  logprob_agreement: z.strictObject({
    max_abs: z.number().min(0, "logprob_agreement.max_abs must be >= 0"),
    mean_abs: z.number().min(0, "logprob_agreement.mean_abs must be >= 0"),
    tokens: z.int().min(0, "logprob_agreement.tokens must be >= 0"),
  }),
  spanned_responses: z.int().min(0, "spanned_responses must be >= 0").default(0),
  version_mismatches: z.int().min(0, "version_mismatches must be >= 0").default(0),
  loss: z.number().nullable().default(null),
});
export type TrainerReport = z.infer<typeof TrainerReport>;

/** Per-batch numbers a training step is judged by, computed by the batch's tracker over each slot's current run. */
export const BatchStepStats = z.object({
  /** Rewards of finished rollouts: mean, population standard deviation, extremes. */
  reward: z.object({
    count: z.int(),
    mean: z.number().nullable(),
    std: z.number().nullable(),
    min: z.number().nullable(),
    max: z.number().nullable(),
  }),
  /** Completion tokens per finished rollout (as its result message counted them): mean and nearest-rank p90. */
  response_tokens: z.object({
    count: z.int(),
    mean: z.number().nullable(),
    p90: z.number().nullable(),
  }),
  /** Complete groups, and those of two or more members that all got the same reward (a missing reward counts 0, as verl's placeholder): no GRPO signal. */
  groups: z.object({ complete: z.int(), no_signal: z.int() }),
  /** Lowest policy_version_start and highest policy_version_end over the rollouts; their difference is the step's staleness span. */
  policy_version: z.object({ min: z.int().nullable(), max: z.int().nullable() }),
  /** Finished rollouts per second from the batch's creation to its last finished rollout. */
  rollouts_per_s: z.number().nullable(),
  /** What the trainer reported of the batch, or null before it does. */
  trainer: TrainerReport.nullable().default(null),
});
export type BatchStepStats = z.infer<typeof BatchStepStats>;

/** One training step of a run: a batch of the series with its progress and step numbers. */
export const RunStep = z.object({
  /** The step number from a `-s<step>-` in the batch id (the verl manager's), else the batch's position (1-based). */
  step: z.int(),
  batch_id: z.string(),
  created_at: z.number(),
  progress: BatchProgress.nullable(),
  stats: BatchStepStats.nullable(),
  /**
   * Weight syncs that began between this batch's creation and the next one's (the last step: until
   * now): how many, and the milliseconds new model calls were refused for them in all.
   */
  weight_syncs: z.object({ count: z.int(), wait_ms: z.number() }),
});
export type RunStep = z.infer<typeof RunStep>;

/** `GET /v1/runs/:series`: the series' batches in step order. */
export const RunView = z.object({ series: z.string(), steps: z.array(RunStep) });
export type RunView = z.infer<typeof RunView>;

/** A group's verdict, or why it is not trained; `complete` false while members still run. */
export const GroupStatus = z.object({
  complete: z.boolean(),
  /** `deliver`, `deliver_valid`, `no_signal` (filtered), `infra_failure` (withheld), `cut`, `cancelled` (a member ended STALE while it ran), or `stale` (dropped by the feed), null while incomplete. */
  verdict: z
    .enum(["deliver", "deliver_valid", "no_signal", "infra_failure", "cut", "cancelled", "stale"])
    .nullable(),
  /** Why, in words. */
  reason: z.string(),
});
export type GroupStatus = z.infer<typeof GroupStatus>;

/** One member of a group with the advantage verl would give it. */
export const GroupMember = z.object({
  sample_index: z.int(),
  rollout_id: z.string().nullable(),
  status: SlotStatus,
  outcome: MemberOutcome.nullable(),
  termination_reason: TerminationReason.nullable(),
  reward: z.number().nullable(),
  /** Whether verl's estimator counts it (a scored member of a group that is trained). */
  scored: z.boolean(),
  /** GRPO: (r − mean) / (std + 1e-6), unbiased std; Dr.GRPO: r − mean; null when not scored. */
  advantage_grpo: z.number().nullable(),
  advantage_drgrpo: z.number().nullable(),
  completion_tokens: z.int().nullable(),
  llm_calls: z.int().nullable(),
  /** The text of its last model reply. */
  final_answer: z.string().nullable(),
});
export type GroupMember = z.infer<typeof GroupMember>;

/** `GET /v1/groups/:uid`: a GRPO group's members side by side, with verl's advantages. */
export const GroupView = z.object({
  uid: z.string(),
  batch_id: z.string(),
  row_index: z.int(),
  n: z.int(),
  training_mode: z.string(),
  status: GroupStatus,
  /** Mean and unbiased std of the scored members' rewards, as verl's GRPO uses them (one member: mean 0, std 1). */
  mean: z.number().nullable(),
  std: z.number().nullable(),
  members: z.array(GroupMember),
});
export type GroupView = z.infer<typeof GroupView>;
