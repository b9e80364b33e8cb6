/**
 * @module The names Durable Objects are addressed by, in one place. A name is an object's identity
 * (`idFromName`): renaming one orphans the object and what it stores, so these never change.
 * Objects of their own per key are named by it: a rollout's session by the rollout id, a batch's
 * tracker by the batch id; sharded objects by their shard's rule: an admission shard
 * `admission-<k>` (`shardName`, src/runtime/policy/admission-fence.ts), a claim-queue shard
 * `<agent>#<k>` (`claimQueueName`, src/runtime/claims/claim-shards.ts), a feed shard
 * `feed-<count>-<k>` or FEED_OBJECT_NAME (`feedShardName`, src/runtime/feed/feed-shards.ts).
 */

/** The one PolicyStore: the policy is global to the deployment. */
export const POLICY_OBJECT_NAME = "default";

/** The one BatchCatalog. */
export const CATALOG_OBJECT_NAME = "default";

/**
 * The single trainer feed (FEED_SHARDS unset or 1), and so the feed object that holds a
 * deployment's groups from before feed sharding. One feed serves every training mode: a trainer
 * pulls with `training_mode` to take only its own.
 */
export const FEED_OBJECT_NAME = "default";
