/**
 * @module The trainer feed over its shards (feed-shards.ts): a pull fans out to every shard in
 * parallel and merges; one lease id, issued here and used in every shard the pull leased from,
 * acks across them; stats, config and dropped-group reports are merged; results are ingested in
 * the shard of their group (after the previous layout's shard, while one is drained, has kept the
 * groups it already holds). Each shard applies the group rules (feed-core.ts) to its own groups.
 */
import type { DroppedGroup, FeedConfig, FeedStats, StatsQueryInput } from "../../schemas/feed";
import { PullRequest } from "../../schemas/feed";
import type { ResultMessage } from "../../schemas/result-message";
import type { PullLimits } from "./feed-core";
import type { AckResult, ConfigureResult, PullResult } from "./feed-results";
import { allShards, currentShardOf, previousShardOf, type FeedLayout } from "./feed-shards";
import { mergeStats } from "./merged-stats";
import type { PackRef } from "./pack-index";
import type { BatchIngestOutcome } from "./result-ingestion";
import type { RequestCounts } from "../request-counter";

/** A pull's answer with where its groups' samples are packed (the Worker strips `pack_refs`). */
export type ShardPullResult = PullResult & { pack_refs?: Record<string, PackRef> };

/** One feed shard (in a Worker: a TrainerFeed stub). */
export interface FeedShardPort {
  pull(
    request: unknown,
    currentPolicyVersion: number,
    limits?: PullLimits,
    leaseId?: string,
  ): Promise<ShardPullResult>;
  returnGroups(leaseId: string, uids: string[]): Promise<number>;
  ack(leaseId: string): Promise<AckResult>;
  stats(query?: StatsQueryInput): Promise<FeedStats>;
  config(): Promise<FeedConfig> | FeedConfig;
  configure(patch: unknown): Promise<ConfigureResult>;
  droppedGroups(batchId: string): Promise<DroppedGroup[]> | DroppedGroup[];
  holds(rolloutId: string): Promise<boolean> | boolean;
  holdsMany(rolloutIds: string[]): Promise<boolean[]> | boolean[];
  ingestBatch(messages: ResultMessage[], onlyKnown?: boolean): Promise<BatchIngestOutcome[]>;
  recordPacks(refs: Array<{ uid: string } & PackRef>): Promise<void> | void;
  requestCounts(): Promise<RequestCounts> | RequestCounts;
}

/** Separates a lease id's random part from the hex bitmap of the shards (in `allShards` order) it holds groups in. */
const LEASE_SHARDS_SEPARATOR = "~";

function leaseIdFor(base: string, shards: number[]): string {
  const bits = new Uint8Array(Math.ceil(Math.max(...shards, 0) / 8) + 1);
  for (const k of shards) bits[k >> 3]! |= 1 << (k & 7);
  return `${base}${LEASE_SHARDS_SEPARATOR}${Array.from(bits, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * A lease id's part every shard stores (`base`) and the shard indexes it names; `shards` null for
 * a lease id without them (one shard, or issued before sharding): every shard is asked.
 */
function parseLease(leaseId: string, count: number): { base: string; shards: number[] | null } {
  const at = leaseId.lastIndexOf(LEASE_SHARDS_SEPARATOR);
  if (at < 0) return { base: leaseId, shards: null };
  const hex = leaseId.slice(at + 1);
  const out: number[] = [];
  for (let k = 0; k < count; k++) {
    const byte = Number.parseInt(hex.slice(2 * (k >> 3), 2 * (k >> 3) + 2) || "0", 16);
    if (byte & (1 << (k & 7))) out.push(k);
  }
  return { base: leaseId.slice(0, at), shards: out };
}

const scaled = (value: number | undefined, shards: number): number | undefined =>
  value === undefined ? undefined : Math.min(value, Math.ceil((2 * value) / shards));

/** The feed as one: the Worker's routes, the results consumer and the sessions use it. */
export class ShardedFeed {
  readonly #layout: FeedLayout;
  readonly #stub: (name: string) => FeedShardPort;
  readonly #names: string[];
  readonly #newLeaseBase: () => string;

  constructor(
    layout: FeedLayout,
    stub: (name: string) => FeedShardPort,
    newLeaseBase: () => string = () => `lease-${crypto.randomUUID()}`,
  ) {
    this.#layout = layout;
    this.#stub = stub;
    this.#names = allShards(layout);
    this.#newLeaseBase = newLeaseBase;
  }

  /** Every shard's name, in the order lease ids index them. */
  get shards(): string[] {
    return this.#names;
  }

  /**
   * Leases up to the request's limits over every shard. Each shard is asked for twice its even
   * share (capped at the whole limit), so groups spread unevenly still fill the pull; what
   * exceeds the limit is handed back to its shard at once, round-robin so every shard keeps its share.
   */
  async pull(
    request: unknown,
    currentPolicyVersion: number,
    limits: PullLimits = {},
  ): Promise<ShardPullResult> {
    const parsed = PullRequest.safeParse(request);
    if (!parsed.success || this.#names.length === 1) {
      // One shard, or a body only a shard can word the problems of: no fan-out.
      return this.#stub(this.#names[0]!).pull(request, currentPolicyVersion, limits);
    }
    const body = parsed.data;
    const n = this.#names.length;
    // Every shard stores the same id; the answer adds the shards that hold groups under it.
    const base = this.#newLeaseBase();
    const share = {
      ...body,
      max_groups: scaled(body.max_groups, n),
      max_samples: scaled(body.max_samples, n),
    };
    const shareLimits = { max_members: scaled(limits.max_members, n) };
    const answers = await Promise.all(
      this.#names.map((name) =>
        this.#stub(name).pull(share, currentPolicyVersion, shareLimits, base),
      ),
    );
    const failed = answers.find((a) => !a.ok);
    if (failed) return failed;
    const ok = answers as Array<Extract<ShardPullResult, { ok: true }>>;
    // Round-robin over the shards until a limit is reached; the rest goes back.
    const kept: Array<{ shard: number; index: number }> = [];
    let samples = 0;
    let members = 0;
    const cursors = ok.map(() => 0);
    for (let progressed = true; progressed;) {
      progressed = false;
      for (const [k, answer] of ok.entries()) {
        const group = answer.groups[cursors[k]!];
        if (!group) continue;
        const count = group.members.reduce((s, m) => s + m.samples, 0);
        const full =
          (body.max_groups !== undefined && kept.length >= body.max_groups) ||
          (kept.length > 0 &&
            body.max_samples !== undefined &&
            samples + count > body.max_samples) ||
          (kept.length > 0 &&
            limits.max_members !== undefined &&
            members + group.members.length > limits.max_members);
        if (full) continue;
        kept.push({ shard: k, index: cursors[k]! });
        cursors[k]! += 1;
        samples += count;
        members += group.members.length;
        progressed = true;
      }
    }
    await Promise.all(
      ok.map(async (answer, k) => {
        const extra = answer.groups.slice(cursors[k]!).map((g) => g.uid);
        if (extra.length > 0 && answer.lease_id)
          await this.#stub(this.#names[k]!).returnGroups(answer.lease_id, extra);
      }),
    );
    const groups = kept.map(({ shard, index }) => ok[shard]!.groups[index]!);
    const holding = [...new Set(kept.map((g) => g.shard))].sort((a, b) => a - b);
    const dropped = new Map(ok.flatMap((a) => a.dropped_groups.map((d) => [d.uid, d] as const)));
    return {
      ok: true,
      lease_id: groups.length > 0 ? leaseIdFor(base, holding) : null,
      lease_expires_at:
        groups.length > 0 ? Math.min(...holding.map((k) => ok[k]!.lease_expires_at!)) : null,
      policy_version: currentPolicyVersion,
      dropped_stale: ok.reduce((s, a) => s + a.dropped_stale, 0),
      dropped_groups: [...dropped.values()],
      groups,
      pack_refs: Object.assign({}, ...ok.map((a) => a.pack_refs ?? {})) as Record<string, PackRef>,
    };
  }

  /** Hands leased groups back to their shards (an inline pull over its budget). */
  async returnGroups(leaseId: string, uids: string[]): Promise<number> {
    const { base, names } = this.#lease(leaseId);
    const counts = await Promise.all(
      names.map((name) => this.#stub(name).returnGroups(base, uids)),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  /**
   * Acks the lease in every shard it holds groups in. Expired in any: the answer is expired (those
   * groups will be delivered again; the others are acked). Unknown only if no shard knows it.
   */
  async ack(leaseId: string): Promise<AckResult> {
    const { base, names } = this.#lease(leaseId);
    const results = await Promise.all(names.map((name) => this.#stub(name).ack(base)));
    if (results.some((r) => !r.ok && r.reason === "lease_expired"))
      return { ok: false, reason: "lease_expired", lease_id: leaseId };
    const acked = results.filter((r): r is Extract<AckResult, { ok: true }> => r.ok);
    if (acked.length === 0) return { ok: false, reason: "unknown_lease", lease_id: leaseId };
    return {
      ok: true,
      lease_id: leaseId,
      acked_groups: acked.reduce((s, r) => s + r.acked_groups, 0),
      already: acked.every((r) => r.already),
    };
  }

  /** Every shard's stats, merged (counters summed; see merged-stats.ts). */
  async stats(query?: StatsQueryInput): Promise<FeedStats> {
    return mergeStats(await Promise.all(this.#names.map((name) => this.#stub(name).stats(query))));
  }

  /** The config in force (every shard holds the same; the first current shard answers). */
  async config(): Promise<FeedConfig> {
    return this.#stub(this.#layout.current[0]!).config();
  }

  /** Changes every shard's config; the first shard's answer (all validate alike). */
  async configure(patch: unknown): Promise<ConfigureResult> {
    const results = await Promise.all(this.#names.map((name) => this.#stub(name).configure(patch)));
    return results.find((r) => !r.ok) ?? results[0]!;
  }

  /** The batch's dropped groups, from every shard. */
  async droppedGroups(batchId: string): Promise<DroppedGroup[]> {
    return (
      await Promise.all(this.#names.map(async (name) => this.#stub(name).droppedGroups(batchId)))
    ).flat();
  }

  /**
   * Which of `checks` the feed holds: one `holdsMany` per current shard the checks' groups map
   * to, then, while a previous layout is drained, one per previous shard for those not found.
   */
  async holdsMany(checks: Array<{ rollout_id: string; uid: string }>): Promise<boolean[]> {
    const held = checks.map(() => false);
    const ask = async (
      shardOf: (uid: string) => string | undefined,
      indices: number[],
    ): Promise<void> => {
      const byShard = new Map<string, number[]>();
      for (const i of indices) {
        const shard = shardOf(checks[i]!.uid);
        if (shard !== undefined) byShard.set(shard, [...(byShard.get(shard) ?? []), i]);
      }
      await Promise.all(
        [...byShard].map(async ([shard, list]) => {
          const answers = await this.#stub(shard).holdsMany(list.map((i) => checks[i]!.rollout_id));
          answers.forEach((answer, k) => (held[list[k]!] = answer));
        }),
      );
    };
    await ask(
      (uid) => currentShardOf(this.#layout, uid),
      checks.map((_, i) => i),
    );
    if (this.#layout.previous.length > 0)
      await ask(
        (uid) => previousShardOf(this.#layout, uid),
        checks.flatMap((_, i) => (held[i] ? [] : [i])),
      );
    return held;
  }

  /**
   * Ingests a consumer batch: one request per shard. While a previous layout is drained, its
   * shards first take the results of groups they already hold (no group is split across layouts);
   * the rest go to the current shards.
   */
  async ingestBatch(
    messages: ResultMessage[],
  ): Promise<{ outcomes: BatchIngestOutcome[]; requests: number }> {
    const outcomes: BatchIngestOutcome[] = new Array(messages.length);
    let requests = 0;
    const send = async (
      shardOf: (uid: string) => string | undefined,
      indices: number[],
      onlyKnown: boolean,
    ): Promise<number[]> => {
      const byShard = new Map<string, number[]>();
      for (const i of indices) {
        const shard = shardOf(messages[i]!.uid);
        if (shard !== undefined) byShard.set(shard, [...(byShard.get(shard) ?? []), i]);
      }
      requests += byShard.size;
      const elsewhere: number[] = [];
      await Promise.all(
        [...byShard].map(async ([shard, list]) => {
          const answers = await this.#stub(shard).ingestBatch(
            list.map((i) => messages[i]!),
            onlyKnown,
          );
          answers.forEach((answer, k) =>
            answer.elsewhere
              ? elsewhere.push(list[k]!)
              : (outcomes[list[k]!] = { ...answer, shard }),
          );
        }),
      );
      return elsewhere;
    };
    const all = messages.map((_, i) => i);
    const rest =
      this.#layout.previous.length > 0
        ? await send((uid) => previousShardOf(this.#layout, uid), all, true)
        : all;
    await send((uid) => currentShardOf(this.#layout, uid), rest, false);
    return { outcomes, requests };
  }

  /** Each shard's own request counters (benches count requests per rollout with them). */
  async requestCounts(): Promise<Array<{ shard: string } & RequestCounts>> {
    return Promise.all(
      this.#names.map(async (shard) => ({ shard, ...(await this.#stub(shard).requestCounts()) })),
    );
  }

  /** Records pack refs in the shards that hold their groups (one request per shard). */
  async recordPacks(refs: Array<{ uid: string; shard?: string } & PackRef>): Promise<void> {
    const byShard = new Map<string, Array<{ uid: string } & PackRef>>();
    for (const { shard, ...ref } of refs) {
      const name = shard ?? currentShardOf(this.#layout, ref.uid);
      byShard.set(name, [...(byShard.get(name) ?? []), ref]);
    }
    await Promise.all([...byShard].map(([name, list]) => this.#stub(name).recordPacks(list)));
  }

  #lease(leaseId: string): { base: string; names: string[] } {
    const { base, shards } = parseLease(leaseId, this.#names.length);
    return { base, names: shards === null ? this.#names : shards.map((k) => this.#names[k]!) };
  }
}
