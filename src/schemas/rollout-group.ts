/** @module Where a rollout belongs for training: its GRPO group and how its results are used. */
import { z } from "zod";

/** `train` feeds the trainer; `infer` only stores trajectories (evaluation runs). */
export const DataManagerName = z.string().regex(/^[a-z][a-z0-9_./-]{0,63}$/, "data_manager must name a registered data manager");

/**
 * The group a rollout is one sample of. Batches set it for every rollout they create; a rollout
 * created alone is a group of one that is stored but not fed to the trainer.
 */
export const RolloutGroup = z.object({
  uid: z.string().min(1).max(300),
  sample_index: z.int().min(0),
  group_size: z.int().min(1).max(1024),
  batch_id: z.string().nullable().default(null),
  /** e.g. `verl/hybrid`, `verl/one_step_off` (see the training-mode registry). */
  training_mode: z.string().min(1).default("verl/hybrid"),
  data_manager: DataManagerName.default("infer"),
}).strict();
export type RolloutGroup = z.infer<typeof RolloutGroup>;
