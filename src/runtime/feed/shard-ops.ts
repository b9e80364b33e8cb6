/**
 * @module What a feed shard serves on top of FeedCore's own methods: a consumer batch's results in
 * one request (a previous layout's shard taking only what it already started), and pulls under a
 * lease id the sharded feed chose, answered with where the leased groups are packed.
 */
import type { FeedCore, PullLimits } from "./feed-core";
import type { PullResult } from "./feed-results";
import type { PackIndex, PackRef } from "./pack-index";
import type { BatchIngestOutcome } from "./result-ingestion";

/**
 * The lease id of the pull in progress, shared with the FeedCore that mints lease ids
 * (`newLeaseId: () => choice.id ?? …`): one id across every shard a pull fans out to.
 */
export interface LeaseIdChoice {
  id: string | undefined;
}

/** A feed shard's batch ingestion and pulls, over its core and its pack refs. */
export class FeedShardOps {
  readonly #core: FeedCore;
  readonly #packs: PackIndex;
  readonly #lease: LeaseIdChoice;

  constructor(core: FeedCore, packs: PackIndex, lease: LeaseIdChoice) {
    this.#core = core;
    this.#packs = packs;
    this.#lease = lease;
  }

  /**
   * Holds a consumer batch's results (one request for the batch, not one per message), each as
   * `ingest` would; a result that completes its group comes back with the group's members, so
   * the consumer can write the group's pack. With `onlyKnown` (a previous layout's shard,
   * feed-shards.ts) a result of a group not started here is left to its new shard.
   */
  async ingestBatch(messages: unknown[], onlyKnown = false): Promise<BatchIngestOutcome[]> {
    const outcomes: BatchIngestOutcome[] = [];
    for (const message of messages) {
      if (onlyKnown && !this.#knows(message)) {
        const uid = String((message as { uid?: unknown } | null)?.uid);
        outcomes.push({
          result: { ok: true, outcome: "held", uid, arrived: 0, group_size: 0 },
          elsewhere: true,
        });
        continue;
      }
      const result = await this.#core.ingest(message);
      outcomes.push(
        result.ok && result.outcome === "completed"
          ? { result, members: this.#core.members(result.uid) }
          : { result },
      );
    }
    return outcomes;
  }

  /** Whether `message` (not yet validated) names a group and rollout this shard already holds. */
  #knows(message: unknown): boolean {
    const { uid, rollout_id: rolloutId } = (message ?? {}) as {
      uid?: unknown;
      rollout_id?: unknown;
    };
    return (
      typeof uid === "string" && typeof rolloutId === "string" && this.#core.knows(uid, rolloutId)
    );
  }

  /**
   * Drops stale groups at `currentPolicyVersion`, then leases ready groups (a PullRequest body)
   * under `leaseId` when given; `pack_refs` says where the leased groups' samples are packed (the
   * Worker strips it).
   */
  async pull(
    request: unknown,
    currentPolicyVersion: number,
    limits?: PullLimits,
    leaseId?: string,
  ): Promise<PullResult & { pack_refs?: Record<string, PackRef> }> {
    // FeedCore takes the id synchronously, before its first await: no other call can interleave.
    this.#lease.id = leaseId;
    const pulling = this.#core.pull(request, currentPolicyVersion, limits);
    this.#lease.id = undefined;
    const pulled = await pulling;
    if (!pulled.ok || pulled.groups.length === 0) return pulled;
    return { ...pulled, pack_refs: this.#packs.refsOf(pulled.groups.map((g) => g.uid)) };
  }
}
