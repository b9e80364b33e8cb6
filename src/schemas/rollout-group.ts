/** @module Where a rollout belongs for training: its GRPO group and how its results are used. */
import { z } from "zod";
import { InfraFailurePolicy, MAX_MEMBER_RETRIES, SignalFilter } from "./member-outcome";

/**
 * Longest group fields. Each one travels in every result message of the group, and a queue
 * message is capped at 128 KB: unbounded, one long value would make every publication fail.
 */
export const MAX_GROUP_UID_LENGTH = 300;
export const MAX_GROUP_BATCH_ID_LENGTH = 160;
export const MAX_TRAINING_MODE_LENGTH = 100;

/** A training mode's name (resolved against the training-mode registry where it is accepted). */
export const TrainingModeName = z
  .string()
  .min(1, "training_mode must not be empty")
  .max(
    MAX_TRAINING_MODE_LENGTH,
    `training_mode must be at most ${MAX_TRAINING_MODE_LENGTH} characters`,
  );

/** `train` feeds the trainer; `infer` only stores trajectories (evaluation runs). */
export const DataManagerName = z
  .string()
  .regex(/^[a-z][a-z0-9_./-]{0,63}$/, "data_manager must name a registered data manager");

/**
 * The group a rollout is one sample of. Batches set it for every rollout they create; a rollout
 * created alone is a group of one that is stored but not fed to the trainer.
 */
export const RolloutGroup = z
  .object({
    uid: z
      .string()
      .min(1)
      .max(MAX_GROUP_UID_LENGTH, `uid must be at most ${MAX_GROUP_UID_LENGTH} characters`),
    sample_index: z.int().min(0),
    group_size: z.int().min(1).max(1024),
    batch_id: z
      .string()
      .max(
        MAX_GROUP_BATCH_ID_LENGTH,
        `batch_id must be at most ${MAX_GROUP_BATCH_ID_LENGTH} characters`,
      )
      .nullable()
      .default(null),
    /** e.g. `verl/hybrid`, `verl/one_step_off` (see the training-mode registry). */
    training_mode: TrainingModeName.default("verl/hybrid"),
    data_manager: DataManagerName.default("infer"),
    /** Which run of its slot this rollout is: 0 first, k after k infrastructure failures of the slot (batches set it). */
    attempt: z.int().min(0).max(MAX_MEMBER_RETRIES).default(0),
    /** How often the slot is re-run after an infrastructure failure; 0 (no one re-runs a rollout created alone). */
    max_member_retries: z
      .int()
      .min(0)
      .max(MAX_MEMBER_RETRIES, `max_member_retries must be <= ${MAX_MEMBER_RETRIES}`)
      .default(0),
    /** Dynamic sampling: groups without signal on this metric are filtered; null keeps every group. */
    signal_filter: SignalFilter.nullable().default(null),
    /** What a complete group still holding an infrastructure failure becomes (default: withheld whole). */
    on_infra_failure: InfraFailurePolicy.default("withhold"),
  })
  .strict();
export type RolloutGroup = z.infer<typeof RolloutGroup>;
