/** @module The logic of the trainer feed: ingest results by uid, drop stale groups, lease, ack. */
import type { Clock, StoragePort } from "../../ports";
import {
  batchSelected,
  FeedConfigUpdate,
  PullRequest,
  StatsQuery,
  type FeedConfig,
  type StatsQueryInput,
  type FeedGroup,
  type FeedMember,
  type FeedStats,
  type DroppedGroup,
} from "../../schemas/feed";
import { trainingModes, type TrainingModeRegistry } from "../../training/training-modes";
import {
  issuesOf,
  type AckResult,
  type ConfigureResult,
  type IngestResult,
  type PullResult,
} from "./feed-results";
import { dropGroup } from "./drop-group";
import { exceedsStaleness } from "../../training/staleness";
import { checkResult, holdResult } from "./feed-ingest";
import { buildStats } from "./feed-stats";
import { FeedStorage, type GroupRow } from "./feed-storage";

/**
 * How long ingested rollout ids (dedupe) and released uids (late arrivals) are remembered: 7 days,
 * far beyond the queue's redelivery window (5 retries a few seconds apart, then the DLQ).
 */
export const DEDUPE_RETENTION_MS = 7 * 24 * 3_600_000;

/** Bounds a caller puts on one pull beyond its body (the Worker's, for an inline pull). */
export interface PullLimits {
  /** Most members (R2 records to read) over the leased groups; the first group is always taken. */
  max_members?: number;
}

/** What the feed logic needs from its Durable Object. */
export interface FeedDeps {
  storage: StoragePort;
  now: Clock;
  /** New lease ids; default `lease-<uuid>`. */
  newLeaseId?: () => string;
  /** Where `training_mode` is resolved; default the Worker's `trainingModes`. */
  modes?: TrainingModeRegistry;
  /**
   * Told, after a pull committed, the groups of batches it dropped as stale: their trackers had
   * judged them already and refill them (src/runtime/batch/stale-groups.ts). Must not throw.
   */
  onStaleDrops?: (drops: StaleDropNotice[]) => void;
}

/** One batch group a pull dropped as stale, as its tracker is told. */
export interface StaleDropNotice {
  uid: string;
  batch_id: string;
  reason: "stale";
  policy_version: number;
}

function feedGroupOf(group: GroupRow, members: FeedMember[]): FeedGroup {
  const {
    uid,
    training_mode,
    batch_id,
    group_size,
    policy_version_start,
    policy_version_end,
    partial,
    deliveries,
  } = group;
  const delivered: FeedGroup = {
    uid,
    training_mode,
    batch_id,
    group_size,
    policy_version_start,
    policy_version_end,
    partial,
    deliveries,
    members,
  };
  // Only a group delivered with infrastructure failures (deliver_valid) names its valid members.
  if (!members.some((member) => member.outcome === "infra")) return delivered;
  return {
    ...delivered,
    valid_members: members
      .filter((member) => member.outcome === "policy")
      .map((member) => member.sample_index),
  };
}

/**
 * Finished rollouts held by GRPO group (`uid`) until `group_size` distinct sample indexes have
 * arrived (any terminal status: failed members are delivered, flagged, for the trainer to mask),
 * then leased to a trainer and deleted on ack. Every method runs its writes in one transaction;
 * lease expiry and the group timeout are applied lazily on each call and by the alarm.
 */
export class FeedCore {
  readonly #storage: FeedStorage;
  readonly #deps: FeedDeps;
  readonly #modes: TrainingModeRegistry;
  readonly #newLeaseId: () => string;

  constructor(deps: FeedDeps) {
    this.#deps = deps;
    this.#storage = new FeedStorage(deps.storage.sql);
    this.#storage.migrate();
    this.#modes = deps.modes ?? trainingModes;
    this.#newLeaseId = deps.newLeaseId ?? (() => `lease-${crypto.randomUUID()}`);
  }

  #tx<T>(fn: () => T): T {
    return this.#deps.storage.transactionSync(fn);
  }

  /**
   * Whether a result of `rolloutId` has been ingested (held, delivered, acked or too late for its
   * group): the ids are remembered for as long as duplicates are recognised.
   */
  holds(rolloutId: string): boolean {
    return this.#storage.isSeen(rolloutId);
  }

  /**
   * Whether this feed has taken rollout `rolloutId` or holds or closed group `uid`: a shard of a
   * previous layout keeps the groups it started, so no group is split when FEED_SHARDS changes.
   */
  knows(uid: string, rolloutId: string): boolean {
    return (
      this.#storage.isSeen(rolloutId) ||
      this.#storage.isClosed(uid) ||
      this.#storage.getGroup(uid) !== undefined
    );
  }

  /** The members of group `uid` held now, by sample index (none once it is acked or dropped): what its pack holds. */
  members(uid: string): FeedMember[] {
    return this.#storage.members(uid);
  }

  /** The groups of `batchId` this feed dropped instead of delivering (at most MAX_REPORTED_DROPS), without pulling. */
  droppedGroups(batchId: string): DroppedGroup[] {
    return this.#storage.dropped.ofBatches({ batch_id: [batchId] });
  }

  /** Holds one finished rollout in its group. A rollout id seen before is a no-op (counted). */
  async ingest(message: unknown): Promise<IngestResult> {
    const checked = checkResult(message, this.#modes);
    if (!checked.ok) return checked;
    const now = this.#deps.now();
    const result = this.#tx(() => holdResult(this.#storage, checked.message, checked.mode, now));
    await this.#schedule(now);
    return result;
  }

  /**
   * Drops complete groups too stale for their mode at `currentPolicyVersion` (counted, never
   * delivered), then leases the oldest ready groups up to the request's limits.
   */
  async pull(
    request: unknown,
    currentPolicyVersion: number,
    limits: PullLimits = {},
  ): Promise<PullResult> {
    const parsed = PullRequest.safeParse(request);
    if (!parsed.success) return { ok: false, reason: "invalid", errors: issuesOf(parsed.error) };
    if (!Number.isInteger(currentPolicyVersion) || currentPolicyVersion < 0)
      throw new RangeError("currentPolicyVersion must be an integer >= 0");
    const body = parsed.data;
    const now = this.#deps.now();
    const staleDrops: StaleDropNotice[] = [];
    const result = this.#tx((): PullResult => {
      this.#settle(now);
      const dropped = this.#dropStale(currentPolicyVersion, now, staleDrops);
      const chosen: GroupRow[] = [];
      let samples = 0;
      let members = 0;
      for (const group of this.#storage.groupsIn("ready")) {
        if (body.training_mode !== undefined && group.training_mode !== body.training_mode)
          continue;
        if (!batchSelected(body, group.batch_id)) continue;
        if (body.uid_prefix !== undefined && !group.uid.startsWith(body.uid_prefix)) continue;
        if (
          body.min_policy_version !== undefined &&
          group.sample_count > 0 &&
          group.policy_version_start < body.min_policy_version
        )
          continue;
        if (body.max_groups !== undefined && chosen.length >= body.max_groups) break;
        if (
          body.max_samples !== undefined &&
          chosen.length > 0 &&
          samples + group.sample_count > body.max_samples
        )
          break;
        if (
          limits.max_members !== undefined &&
          chosen.length > 0 &&
          members + group.arrived > limits.max_members
        )
          break;
        chosen.push(group);
        samples += group.sample_count;
        members += group.arrived;
      }
      const droppedGroups = this.#storage.dropped.ofBatches(body);
      if (chosen.length === 0)
        return {
          ok: true,
          lease_id: null,
          lease_expires_at: null,
          policy_version: currentPolicyVersion,
          dropped_stale: dropped,
          dropped_groups: droppedGroups,
          groups: [],
        };
      const leaseId = this.#newLeaseId();
      const expiresAt = now + body.lease_ms;
      this.#storage.insertLease({
        lease_id: leaseId,
        state: "active",
        created_at: now,
        expires_at: expiresAt,
        group_count: chosen.length,
      });
      const groups = chosen.map((group) => {
        const leased: GroupRow = {
          ...group,
          state: "leased",
          lease_id: leaseId,
          deliveries: group.deliveries + 1,
        };
        this.#storage.writeGroup(leased);
        this.#storage.bump(group.training_mode, "delivered");
        return feedGroupOf(leased, this.#storage.members(group.uid));
      });
      return {
        ok: true,
        lease_id: leaseId,
        lease_expires_at: expiresAt,
        policy_version: currentPolicyVersion,
        dropped_stale: dropped,
        dropped_groups: droppedGroups,
        groups,
      };
    });
    if (staleDrops.length > 0) this.#deps.onStaleDrops?.(staleDrops);
    await this.#schedule(now);
    return result;
  }

  /**
   * Puts groups of a live lease back to ready, as if never pulled (a pull that could not inline
   * them within its budget hands them back so the next pull delivers them first). Returns how
   * many went back; groups not under that lease are left alone.
   */
  async returnGroups(leaseId: string, uids: string[]): Promise<number> {
    const now = this.#deps.now();
    const returned = this.#tx(() => {
      this.#settle(now);
      const lease = this.#storage.getLease(leaseId);
      if (!lease || lease.state !== "active") return 0;
      const wanted = new Set(uids);
      let count = 0;
      for (const group of this.#storage.groupsOfLease(leaseId)) {
        if (!wanted.has(group.uid)) continue;
        this.#storage.writeGroup({
          ...group,
          state: "ready",
          lease_id: null,
          deliveries: Math.max(0, group.deliveries - 1),
        });
        this.#storage.bump(group.training_mode, "delivered", -1);
        count += 1;
      }
      this.#storage.setLeaseGroupCount(leaseId, lease.group_count - count);
      return count;
    });
    await this.#schedule(now);
    return returned;
  }

  /** Deletes the groups of a live lease; acking the same lease again is a no-op. */
  async ack(leaseId: string): Promise<AckResult> {
    const now = this.#deps.now();
    const result = this.#tx((): AckResult => {
      this.#settle(now);
      const lease = typeof leaseId === "string" ? this.#storage.getLease(leaseId) : undefined;
      if (!lease) return { ok: false, reason: "unknown_lease", lease_id: String(leaseId) };
      if (lease.state === "acked")
        return { ok: true, lease_id: leaseId, acked_groups: lease.group_count, already: true };
      if (lease.state === "expired")
        return { ok: false, reason: "lease_expired", lease_id: leaseId };
      const groups = this.#storage.groupsOfLease(leaseId);
      for (const group of groups) {
        this.#storage.closeGroup(group.uid, now);
        this.#storage.bump(group.training_mode, "acked");
      }
      this.#storage.setLeaseState(leaseId, "acked");
      return { ok: true, lease_id: leaseId, acked_groups: groups.length, already: false };
    });
    await this.#schedule(now);
    return result;
  }

  /**
   * Counters and live group counts, in total, per training mode and per batch (expired leases
   * applied first); `query` (a StatsQuery) narrows the per-batch counts.
   */
  async stats(query: StatsQueryInput = {}): Promise<FeedStats> {
    // The route validated the query already; a bad one here is a programming error.
    const selector = StatsQuery.parse(query);
    const now = this.#deps.now();
    const stats = this.#tx(() => {
      this.#settle(now);
      return buildStats(this.#storage, this.#storage.readConfig(), selector);
    });
    await this.#schedule(now);
    return stats;
  }

  /** The config in force. */
  config(): FeedConfig {
    return this.#storage.readConfig();
  }

  /** Changes the given config fields (`group_timeout_ms: null` turns the timeout off). */
  async configure(patch: unknown): Promise<ConfigureResult> {
    const parsed = FeedConfigUpdate.safeParse(patch);
    if (!parsed.success) return { ok: false, reason: "invalid", errors: issuesOf(parsed.error) };
    const changes = Object.fromEntries(
      Object.entries(parsed.data).filter(([, value]) => value !== undefined),
    );
    const config = { ...this.#storage.readConfig(), ...changes };
    this.#storage.writeConfig(config);
    await this.#schedule(this.#deps.now());
    return { ok: true, config: this.#storage.readConfig() };
  }

  /** The alarm: expires leases, releases timed-out groups, forgets old dedupe memory, re-arms. */
  async alarm(): Promise<void> {
    const now = this.#deps.now();
    this.#tx(() => this.#settle(now));
    await this.#schedule(now);
  }

  /** Applies everything due at `now`: expired leases, the group timeout, retention. */
  #settle(now: number): void {
    const storage = this.#storage;
    for (const lease of storage.expiredLeases(now)) {
      for (const group of storage.groupsOfLease(lease.lease_id)) {
        storage.writeGroup({ ...group, state: "ready", lease_id: null });
        storage.bump(group.training_mode, "lease_expired");
      }
      storage.setLeaseState(lease.lease_id, "expired");
    }
    const timeout = storage.readConfig().group_timeout_ms;
    if (timeout !== null) {
      for (const group of storage.pendingSince(now - timeout)) {
        storage.writeGroup({ ...group, state: "ready", partial: true, ready_at: now });
        storage.bump(group.training_mode, "partial_released");
      }
    }
    storage.prune(now - DEDUPE_RETENTION_MS);
  }

  /** Drops ready groups whose version lags `current` by more than their mode allows (a batch's into `notices`); returns how many. */
  #dropStale(current: number, now: number, notices: StaleDropNotice[]): number {
    let dropped = 0;
    for (const group of this.#storage.groupsIn("ready")) {
      // A group without samples holds nothing that could be off-policy: deliver it (its failures count).
      if (
        group.sample_count === 0 ||
        !exceedsStaleness(current, group.policy_version_start, group.max_staleness)
      )
        continue;
      dropGroup(this.#storage, group, { reason: "stale", policy_version: current }, now);
      if (group.batch_id !== null)
        notices.push({
          uid: group.uid,
          batch_id: group.batch_id,
          reason: "stale",
          policy_version: current,
        });
      dropped += 1;
    }
    return dropped;
  }

  /** Sets the alarm for the next lease expiry or group timeout, if any. */
  async #schedule(now: number): Promise<void> {
    const timeout = this.#storage.readConfig().group_timeout_ms;
    const oldest = timeout === null ? null : this.#storage.oldestPending();
    const candidates = [
      this.#storage.nextLeaseExpiry(),
      oldest === null || timeout === null ? null : oldest + timeout,
    ].filter((t): t is number => t !== null);
    if (candidates.length === 0) return;
    await this.#deps.storage.setAlarm(Math.max(now, Math.min(...candidates)));
  }
}
