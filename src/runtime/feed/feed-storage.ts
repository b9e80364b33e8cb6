/** @module SQLite tables of the trainer feed: groups, members, leases, dedupe memory, counters, config. */
import { z } from "zod";
import type { SqlPort } from "../../ports";
import { FeedConfig, type FeedCounterName, FeedMember } from "../../schemas/feed";
import { CREATE_META_TABLE, readMetaText, writeMetaText } from "../meta-table";
import { DroppedGroups } from "./dropped-groups";

/** Name prefix of the counters of completion tokens per policy version (`tokens@v3`). */
export const VERSION_TOKENS_PREFIX = "tokens@v";

const MIGRATIONS = [
  CREATE_META_TABLE,
  `CREATE TABLE IF NOT EXISTS counters (training_mode TEXT NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (training_mode, name))`,
  // Rollout ids ever ingested (dedupe) and uids already released: kept for DEDUPE_RETENTION_MS.
  `CREATE TABLE IF NOT EXISTS seen (rollout_id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS seen_at ON seen (seen_at)`,
  `CREATE TABLE IF NOT EXISTS closed (uid TEXT PRIMARY KEY, closed_at INTEGER NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS closed_at ON closed (closed_at)`,
  `CREATE TABLE IF NOT EXISTS feed_groups (
     uid TEXT PRIMARY KEY,
     training_mode TEXT NOT NULL,
     batch_id TEXT,
     max_staleness INTEGER NOT NULL,
     group_size INTEGER NOT NULL,
     state TEXT NOT NULL,
     partial INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     ready_at INTEGER,
     lease_id TEXT,
     deliveries INTEGER NOT NULL,
     policy_version_start INTEGER NOT NULL,
     policy_version_end INTEGER NOT NULL,
     sample_count INTEGER NOT NULL,
     arrived INTEGER NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS groups_state ON feed_groups (state, ready_at)`,
  `CREATE INDEX IF NOT EXISTS groups_lease ON feed_groups (lease_id)`,
  `CREATE TABLE IF NOT EXISTS members (
     uid TEXT NOT NULL,
     sample_index INTEGER NOT NULL,
     rollout_id TEXT NOT NULL,
     value TEXT NOT NULL,
     PRIMARY KEY (uid, sample_index)
   )`,
  `CREATE TABLE IF NOT EXISTS leases (lease_id TEXT PRIMARY KEY, state TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, group_count INTEGER NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS leases_expiry ON leases (state, expires_at)`,
];

/** Where a group is: collecting members, ready to pull, or leased to a trainer. */
export const GroupState = z.enum(["pending", "ready", "leased"]);
export type GroupState = z.infer<typeof GroupState>;

/** One group row, validated on write. */
export const GroupRow = z
  .object({
    uid: z.string().min(1),
    training_mode: z.string().min(1),
    batch_id: z.string().nullable(),
    max_staleness: z.int().min(0),
    group_size: z.int().min(1),
    state: GroupState,
    partial: z.boolean(),
    created_at: z.number(),
    ready_at: z.number().nullable(),
    lease_id: z.string().nullable(),
    deliveries: z.int().min(0),
    policy_version_start: z.int().min(0),
    policy_version_end: z.int().min(0),
    sample_count: z.int().min(0),
    arrived: z.int().min(0),
  })
  .strict();
export type GroupRow = z.infer<typeof GroupRow>;

type RawGroup = Omit<GroupRow, "partial" | "state"> & { partial: number; state: string };

/** A lease and what became of it. */
export interface LeaseRow {
  lease_id: string;
  state: "active" | "acked" | "expired";
  created_at: number;
  expires_at: number;
  group_count: number;
}

function toGroup(raw: RawGroup): GroupRow {
  return { ...raw, partial: raw.partial === 1, state: GroupState.parse(raw.state) };
}

/** Typed reads and validated writes over the feed's tables. */
export class FeedStorage {
  readonly #sql: SqlPort;
  /** Groups dropped instead of delivered, reported to pulls that name their batch. */
  readonly dropped: DroppedGroups;

  constructor(sql: SqlPort) {
    this.#sql = sql;
    this.dropped = new DroppedGroups(sql);
  }

  /** Creates the tables if they do not exist (idempotent). */
  migrate(): void {
    for (const statement of MIGRATIONS) this.#sql.exec(statement);
    this.dropped.migrate();
    // Feeds created before groups knew their batch: add the column (their groups stay batch-less).
    const columns = this.#sql
      .exec<{ name: string }>(`SELECT name FROM pragma_table_info('feed_groups')`)
      .toArray();
    if (!columns.some((column) => column.name === "batch_id"))
      this.#sql.exec(`ALTER TABLE feed_groups ADD COLUMN batch_id TEXT`);
    this.#sql.exec(`CREATE INDEX IF NOT EXISTS groups_batch ON feed_groups (batch_id, state)`);
  }

  /** The stored config, or the default (no group timeout). */
  readConfig(): FeedConfig {
    const text = readMetaText(this.#sql, "config");
    return FeedConfig.parse(text !== undefined ? JSON.parse(text) : {});
  }

  /** Validates and stores the config. */
  writeConfig(config: FeedConfig): void {
    writeMetaText(this.#sql, "config", JSON.stringify(FeedConfig.parse(config)));
  }

  /** Adds `by` to counter `name` of `mode`. */
  bump(mode: string, name: FeedCounterName, by = 1): void {
    if (by === 0) return;
    this.#sql.exec(
      `INSERT INTO counters (training_mode, name, n) VALUES (?, ?, ?) ON CONFLICT(training_mode, name) DO UPDATE SET n = n + excluded.n`,
      mode,
      name,
      by,
    );
  }

  /** Every counter (token counts per policy version are counters too, named VERSION_TOKENS_PREFIX + version). */
  counters(): Array<{ training_mode: string; name: string; n: number }> {
    return this.#sql
      .exec<{ training_mode: string; name: string; n: number }>(
        `SELECT training_mode, name, n FROM counters`,
      )
      .toArray();
  }

  /** Adds `tokens` completion tokens generated under `version` (a counter of no training mode: they are summed over all). */
  bumpVersionTokens(version: string, tokens: number): void {
    if (tokens === 0) return;
    this.#sql.exec(
      `INSERT INTO counters (training_mode, name, n) VALUES ('', ?, ?) ON CONFLICT(training_mode, name) DO UPDATE SET n = n + excluded.n`,
      VERSION_TOKENS_PREFIX + version,
      tokens,
    );
  }

  /** Groups per batch and state (groups of no batch left out). */
  batchCounts(): Array<{ batch_id: string; state: string; n: number }> {
    return this.#sql
      .exec<{ batch_id: string; state: string; n: number }>(
        `SELECT batch_id, state, COUNT(*) AS n FROM feed_groups WHERE batch_id IS NOT NULL GROUP BY batch_id, state`,
      )
      .toArray();
  }

  /** Groups per mode and state. */
  liveCounts(): Array<{ training_mode: string; state: string; n: number }> {
    return this.#sql
      .exec<{ training_mode: string; state: string; n: number }>(
        `SELECT training_mode, state, COUNT(*) AS n FROM feed_groups GROUP BY training_mode, state`,
      )
      .toArray();
  }

  /** Whether `rolloutId` was ingested within the retention window. */
  isSeen(rolloutId: string): boolean {
    return (
      this.#sql.exec(`SELECT 1 AS found FROM seen WHERE rollout_id = ?`, rolloutId).toArray()
        .length > 0
    );
  }

  /** Remembers an ingested rollout id. */
  markSeen(rolloutId: string, now: number): void {
    this.#sql.exec(
      `INSERT OR IGNORE INTO seen (rollout_id, seen_at) VALUES (?, ?)`,
      rolloutId,
      now,
    );
  }

  /** Whether group `uid` was already released (acked or dropped) within the retention window. */
  isClosed(uid: string): boolean {
    return this.#sql.exec(`SELECT 1 AS found FROM closed WHERE uid = ?`, uid).toArray().length > 0;
  }

  /** Forgets dedupe, closed- and dropped-group memory, and finished leases, older than `before`. */
  prune(before: number): void {
    this.#sql.exec(`DELETE FROM seen WHERE seen_at < ?`, before);
    this.#sql.exec(`DELETE FROM closed WHERE closed_at < ?`, before);
    this.dropped.prune(before);
    this.#sql.exec(`DELETE FROM leases WHERE state != 'active' AND expires_at < ?`, before);
  }

  /** One group, or undefined. */
  getGroup(uid: string): GroupRow | undefined {
    const raw = this.#sql
      .exec<RawGroup>(`SELECT * FROM feed_groups WHERE uid = ?`, uid)
      .toArray()[0];
    return raw ? toGroup(raw) : undefined;
  }

  /** Validates and writes a group row (insert or replace). */
  writeGroup(group: GroupRow): void {
    const g = GroupRow.parse(group);
    this.#sql.exec(
      `INSERT OR REPLACE INTO feed_groups (uid, training_mode, batch_id, max_staleness, group_size, state, partial, created_at, ready_at, lease_id, deliveries, policy_version_start, policy_version_end, sample_count, arrived)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      g.uid,
      g.training_mode,
      g.batch_id,
      g.max_staleness,
      g.group_size,
      g.state,
      g.partial ? 1 : 0,
      g.created_at,
      g.ready_at,
      g.lease_id,
      g.deliveries,
      g.policy_version_start,
      g.policy_version_end,
      g.sample_count,
      g.arrived,
    );
  }

  /** Groups in `state`, oldest ready first (then by uid, for a stable order). */
  groupsIn(state: GroupState): GroupRow[] {
    return this.#sql
      .exec<RawGroup>(
        `SELECT * FROM feed_groups WHERE state = ? ORDER BY ready_at, created_at, uid`,
        state,
      )
      .toArray()
      .map(toGroup);
  }

  /** Pending groups whose first member arrived at or before `cutoff`. */
  pendingSince(cutoff: number): GroupRow[] {
    return this.#sql
      .exec<RawGroup>(
        `SELECT * FROM feed_groups WHERE state = 'pending' AND created_at <= ? ORDER BY created_at, uid`,
        cutoff,
      )
      .toArray()
      .map(toGroup);
  }

  /** Groups under lease `leaseId`. */
  groupsOfLease(leaseId: string): GroupRow[] {
    return this.#sql
      .exec<RawGroup>(
        `SELECT * FROM feed_groups WHERE lease_id = ? ORDER BY ready_at, created_at, uid`,
        leaseId,
      )
      .toArray()
      .map(toGroup);
  }

  /** Deletes a group with its members and remembers its uid as released. */
  closeGroup(uid: string, now: number): void {
    this.#sql.exec(`DELETE FROM members WHERE uid = ?`, uid);
    this.#sql.exec(`DELETE FROM feed_groups WHERE uid = ?`, uid);
    this.#sql.exec(`INSERT OR REPLACE INTO closed (uid, closed_at) VALUES (?, ?)`, uid, now);
  }

  /** Whether group `uid` already holds a member at `sampleIndex`. */
  hasMember(uid: string, sampleIndex: number): boolean {
    return (
      this.#sql
        .exec(`SELECT 1 AS found FROM members WHERE uid = ? AND sample_index = ?`, uid, sampleIndex)
        .toArray().length > 0
    );
  }

  /** Validates and stores one member of group `uid`. */
  insertMember(uid: string, member: FeedMember): void {
    const m = FeedMember.parse(member);
    this.#sql.exec(
      `INSERT INTO members (uid, sample_index, rollout_id, value) VALUES (?, ?, ?, ?)`,
      uid,
      m.sample_index,
      m.rollout_id,
      JSON.stringify(m),
    );
  }

  /** The members of group `uid`, by sample index. */
  members(uid: string): FeedMember[] {
    return this.#sql
      .exec<{ value: string }>(`SELECT value FROM members WHERE uid = ? ORDER BY sample_index`, uid)
      .toArray()
      .map((row) => FeedMember.parse(JSON.parse(row.value)));
  }

  /** Stores a new lease. */
  insertLease(lease: LeaseRow): void {
    this.#sql.exec(
      `INSERT INTO leases (lease_id, state, created_at, expires_at, group_count) VALUES (?, ?, ?, ?, ?)`,
      lease.lease_id,
      lease.state,
      lease.created_at,
      lease.expires_at,
      lease.group_count,
    );
  }

  /** One lease, or undefined. */
  getLease(leaseId: string): LeaseRow | undefined {
    return this.#sql
      .exec<{
        lease_id: string;
        state: string;
        created_at: number;
        expires_at: number;
        group_count: number;
      }>(`SELECT * FROM leases WHERE lease_id = ?`, leaseId)
      .toArray()[0] as LeaseRow | undefined;
  }

  /** Marks a lease acked or expired. */
  setLeaseState(leaseId: string, state: LeaseRow["state"]): void {
    this.#sql.exec(`UPDATE leases SET state = ? WHERE lease_id = ?`, state, leaseId);
  }

  /** Sets how many groups a lease holds (after some were handed back). */
  setLeaseGroupCount(leaseId: string, count: number): void {
    this.#sql.exec(`UPDATE leases SET group_count = ? WHERE lease_id = ?`, count, leaseId);
  }

  /** Active leases that expired at or before `now`. */
  expiredLeases(now: number): LeaseRow[] {
    return this.#sql
      .exec<{
        lease_id: string;
        state: string;
        created_at: number;
        expires_at: number;
        group_count: number;
      }>(`SELECT * FROM leases WHERE state = 'active' AND expires_at <= ?`, now)
      .toArray() as LeaseRow[];
  }

  /** Active leases. */
  activeLeaseCount(): number {
    return (
      this.#sql
        .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM leases WHERE state = 'active'`)
        .toArray()[0]?.n ?? 0
    );
  }

  /** The earliest expiry of an active lease, or null. */
  nextLeaseExpiry(): number | null {
    return (
      this.#sql
        .exec<{ t: number | null }>(
          `SELECT MIN(expires_at) AS t FROM leases WHERE state = 'active'`,
        )
        .toArray()[0]?.t ?? null
    );
  }

  /** The earliest first arrival of a pending group, or null. */
  oldestPending(): number | null {
    return (
      this.#sql
        .exec<{ t: number | null }>(
          `SELECT MIN(created_at) AS t FROM feed_groups WHERE state = 'pending'`,
        )
        .toArray()[0]?.t ?? null
    );
  }
}
