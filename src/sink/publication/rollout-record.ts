/** @module The R2 object a finished rollout leaves: everything about it; validated when read (written from validated rows, typed). */
import { z } from "zod";
import { RolloutView } from "../../schemas/rollout-api";
import { TrainingSample } from "../../schemas/training-sample";

/** Version of the RolloutRecord shape. */
export const ROLLOUT_RECORD_SCHEMA_VERSION = 1;

/** A finished rollout: its full view and the training samples cut from its calls. */
export const RolloutRecord = z.object({
  schema_version: z.literal(ROLLOUT_RECORD_SCHEMA_VERSION),
  rollout: RolloutView,
  samples: z.array(TrainingSample),
  sample_mode: z.enum(["cumulative", "per_call"]),
  /** Samples started because a call's prompt did not extend the previous call's prompt + completion. */
  drift_splits: z.int().min(0),
});
export type RolloutRecord = z.infer<typeof RolloutRecord>;
