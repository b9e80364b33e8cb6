/**
 * @module The message a session puts on ROLLOUT_RESULTS to check that its published result
 * reached the trainer feed: the results consumer asks each feed shard once for a whole batch of
 * them and answers each session. It shares the queue with the results it checks, so it normally
 * arrives after its own result.
 */
import { z } from "zod";
import { MAX_GROUP_UID_LENGTH } from "./rollout-group";

/** One session's delivery check (told apart from a ResultMessage by `kind`). */
export const DeliveryCheckMessage = z.object({
  kind: z.literal("delivery_check"),
  rollout_id: z.string().min(1).max(256),
  /** The rollout's group: it picks the feed shard. */
  uid: z.string().min(1).max(MAX_GROUP_UID_LENGTH),
});
export type DeliveryCheckMessage = z.infer<typeof DeliveryCheckMessage>;
