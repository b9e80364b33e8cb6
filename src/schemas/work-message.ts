/** @module The message on the ROLLOUT_WORK queue that asks a driver to advance one rollout. */
import { z } from "zod";

/** Asks a driver to lease and advance `rollout_id`. Duplicates are harmless: the lease decides. */
export const WorkMessage = z.object({
  rollout_id: z.string().min(1),
  reason: z.enum(["created", "handoff", "watchdog"]),
  sent_at: z.number(),
});
export type WorkMessage = z.infer<typeof WorkMessage>;
