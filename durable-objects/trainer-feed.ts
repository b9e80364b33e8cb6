/** @module The trainer feed Durable Object: finished rollouts grouped by uid, leased to a trainer and acked. */
import { RequestCounter, type RequestCounts } from "../src/runtime";
import { DurableObject } from "cloudflare:workers";
import {
  COMPACTION_LIMITS,
  FeedCore,
  PackIndex,
  planCompaction,
  QUIET_COMPACTION_MS,
  type BatchIngestOutcome,
  type CompactionPlan,
  type PackRef,
  type PullLimits,
  type PullResult,
  type TrainerFeedApi,
} from "../src/runtime/feed";
import { installSurface } from "../src/runtime/objects";
import { ARROW_EOS, ARROW_STREAM_MEDIA_TYPE } from "../src/sink/formats/arrow";
import { streamSpans } from "../src/sink/publication";

/** The methods installed from the table below; the class writes out the rest of TrainerFeedApi. */
type Installed = Omit<TrainerFeedApi, "ingestBatch" | "pull" | "recordPacks" | "requestCounts">;

/** The installed methods, as TypeScript sees them (the class still `implements` the whole interface). */
export interface TrainerFeed extends Installed {}

/**
 * GRPO groups on their way to the trainer: held until complete (or timed out), dropped when too
 * stale for their training mode, leased on pull and deleted on ack. One instance per feed shard
 * (FEED_SHARDS; "default" when there is one, see src/runtime/feed/feed-shards.ts), for every
 * training mode; the alarm expires leases and releases timed-out groups. Reading samples from R2 is left to the Worker, so calls here stay small.
 */
export class TrainerFeed extends DurableObject<Env> implements TrainerFeedApi {
  readonly #core: FeedCore;
  readonly #packs: PackIndex;
  /** The lease id the sharded feed chose for the pull in progress (one id across shards). */
  #leaseId: string | undefined;

  readonly #requests = new RequestCounter();
  /** Span bytes recorded since compaction last looked (it looks again past COMPACTION_LIMITS.minBytes). */
  #recordedBytes = 0;
  /** The compaction running, if any: one at a time per shard. */
  #compacting: Promise<void> | null = null;
  /** Fires once no pack has been recorded for QUIET_COMPACTION_MS: a batch's tail is compacted then. */
  #quietTimer: ReturnType<typeof setTimeout> | undefined;
  /** A threshold asked for while a compaction ran (the quiet timer's), taken up when it ends. */
  #deferredMinBytes: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = ctx.storage;
    this.#core = new FeedCore({
      storage: {
        sql: storage.sql,
        transactionSync: (fn) => storage.transactionSync(fn),
        setAlarm: (time) => storage.setAlarm(time),
      },
      now: () => Date.now(),
      newLeaseId: () => this.#leaseId ?? `lease-${crypto.randomUUID()}`,
    });
    this.#packs = new PackIndex(storage.sql);
  }

  static {
    installSurface<TrainerFeed, Installed>(TrainerFeed, (s) => s.#requests, {
      ingest: (s, message) => s.#core.ingest(message),
      holds: (s, rolloutId) => s.#core.holds(rolloutId),
      holdsMany: (s, rolloutIds) => rolloutIds.map((id) => s.#core.holds(id)),
      droppedGroups: (s, batchId) => s.#core.droppedGroups(batchId),
      returnGroups: (s, leaseId, uids) => s.#core.returnGroups(leaseId, uids),
      ack: (s, leaseId) => s.#core.ack(leaseId),
      stats: (s, query) => s.#core.stats(query),
      config: (s) => s.#core.config(),
      configure: (s, patch) => s.#core.configure(patch),
    });
  }

  /**
   * Holds a consumer batch's results (one request for the batch, not one per message), each as
   * `ingest` would; a result that completes its group comes back with the group's members, so
   * the consumer can write the group's pack.
   */
  async ingestBatch(messages: unknown[], onlyKnown = false): Promise<BatchIngestOutcome[]> {
    this.#requests.count("ingestBatch");
    const outcomes: BatchIngestOutcome[] = [];
    for (const message of messages) {
      // A previous layout's shard takes only what it already started (feed-shards.ts).
      const { uid, rollout_id: rolloutId } = (message ?? {}) as {
        uid?: unknown;
        rollout_id?: unknown;
      };
      if (
        onlyKnown &&
        !(
          typeof uid === "string" &&
          typeof rolloutId === "string" &&
          this.#core.knows(uid, rolloutId)
        )
      ) {
        outcomes.push({
          result: { ok: true, outcome: "held", uid: String(uid), arrived: 0, group_size: 0 },
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

  /**
   * Drops stale groups at `currentPolicyVersion`, then leases ready groups (a PullRequest body);
   * `pack_refs` says where the leased groups' samples are packed (the Worker strips it).
   */
  async pull(
    request: unknown,
    currentPolicyVersion: number,
    limits?: PullLimits,
    leaseId?: string,
  ): Promise<PullResult & { pack_refs?: Record<string, PackRef> }> {
    this.#requests.count("pull");
    // FeedCore takes the id synchronously, before its first await: no other call can interleave.
    this.#leaseId = leaseId;
    const pulling = this.#core.pull(request, currentPolicyVersion, limits);
    this.#leaseId = undefined;
    const pulled = await pulling;
    if (!pulled.ok || pulled.groups.length === 0) return pulled;
    return { ...pulled, pack_refs: this.#packs.refsOf(pulled.groups.map((g) => g.uid)) };
  }

  /** Records where the results consumer packed groups of this shard (one request per consumer batch). */
  recordPacks(refs: Array<{ uid: string } & PackRef>): void {
    this.#requests.count("recordPacks");
    this.#packs.record(refs, Date.now());
    this.#recordedBytes += refs.reduce((n, ref) => n + (ref.span?.length ?? 0), 0);
    const minBytes = this.#core.config().pack_compaction_min_bytes;
    if (minBytes === 0) return;
    if (this.#recordedBytes >= minBytes) this.#compactSoon(minBytes);
    // Below the threshold a batch's last groups would stay scattered: once packs stop coming, any two reads' worth is compacted.
    clearTimeout(this.#quietTimer);
    this.#quietTimer = setTimeout(() => this.#compactSoon(1), QUIET_COMPACTION_MS);
  }

  /**
   * Starts a compaction of the ready groups' small packs (pack-compaction.ts) if one is due and
   * none runs; it goes on after this call returns (the object lives while its I/O is pending), and
   * looks again when done. The config's `pack_compaction_min_bytes: 0` turns it off.
   */
  #compactSoon(minBytes: number): void {
    if (this.#compacting !== null) {
      this.#deferredMinBytes = Math.min(this.#deferredMinBytes ?? minBytes, minBytes);
      return;
    }
    this.#recordedBytes = 0;
    const plan = planCompaction(this.#packs.readySpannedRefs(), () => crypto.randomUUID(), {
      ...COMPACTION_LIMITS,
      minBytes,
    });
    if (!plan) return;
    this.#compacting = this.#compact(plan)
      .then(
        (moved) => moved > 0,
        (error: unknown) => {
          // Not retried until more packs are recorded: a failing R2 must not become a busy loop.
          console.warn("pack compaction failed; pulls read the small packs", {
            key: plan.key,
            error: error instanceof Error ? error.message : String(error),
          });
          return false;
        },
      )
      .then((progressed) => {
        this.#compacting = null;
        const deferred = this.#deferredMinBytes;
        this.#deferredMinBytes = null;
        if (progressed || deferred !== null)
          this.#compactSoon(Math.min(minBytes, deferred ?? minBytes));
      });
    this.ctx.waitUntil(this.#compacting);
  }

  /**
   * Writes the compacted pack (streamed from the small packs' spans: 5 reads at once and the put,
   * the 6 connections an invocation has), then moves the refs that did not change meanwhile.
   */
  async #compact(plan: CompactionPlan): Promise<number> {
    this.#requests.count("compaction");
    const { body } = streamSpans(this.env.TRAJECTORIES, plan.head, plan.reads, ARROW_EOS);
    await this.env.TRAJECTORIES.put(plan.key, body, {
      httpMetadata: { contentType: ARROW_STREAM_MEDIA_TYPE },
    });
    return this.#packs.move(plan.moves, Date.now());
  }

  /** Requests this object served since it started, by method (benches count requests per rollout with it). */
  requestCounts(): RequestCounts {
    return this.#requests.read();
  }

  /** Expires leases, releases timed-out groups and re-arms. */
  override async alarm(): Promise<void> {
    this.#requests.count("alarm");
    await this.#core.alarm();
  }
}
