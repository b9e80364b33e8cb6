/**
 * @module What the policy object pushes to its admission shards: the policy snapshot, whether a
 * weight sync is under way, and a generation that orders the pushes. How many shards there are
 * and which one admits a rollout: src/runtime/object-names.ts.
 */
import { z } from "zod";
import { PolicySnapshot } from "../../schemas/policy";

/**
 * The policy as one admission shard enforces it. `generation` grows with every change the policy
 * object makes, so a shard keeps the newest fence whatever order pushes and fetches arrive in.
 */
export const AdmissionFence = z
  .object({
    generation: z.int().min(0),
    snapshot: PolicySnapshot,
    syncing: z.boolean(),
    /** The sync under way is an `interrupt` sync: the shard tells the sessions of its calls in flight to cut them. */
    interrupt: z.boolean().default(false),
    /**
     * The latest version of each named resource (`PUT /v1/resources/:name`), so a shard answers
     * "the latest" exactly and reads a version's value from the policy object once (versions never
     * change). A fence stored before this field reads as none, so the shard asks for a new one.
     */
    resources: z.record(z.string(), z.int().min(1)).optional(),
  })
  .strict();
export type AdmissionFence = z.infer<typeof AdmissionFence>;
