/**
 * @module Where each group's samples are packed: `uid → (R2 key, record batch index)`, kept by the
 * feed shard that holds the group, beside (not inside) the feed's own tables, so the group rules
 * in feed-core never see it. A pull hands the refs of the groups it leased to the Worker, which
 * then reads each pack object once for all of its groups.
 */
import type { SqlPort } from "../../ports";

/**
 * Where a group's record batch lies in its pack object, so an Arrow pull streams its bytes
 * straight from R2 (a range read) without reading the object whole: `offset`/`length` in bytes,
 * the pack's column `signature` (the pull's schema is built from it), and the members the batch
 * holds (`[rollout_id, rows]`, checked against the leased group before the bytes are used).
 */
export interface PackSpan {
  offset: number;
  length: number;
  signature: string;
  rows: Array<[string, number]>;
}

/** A group's place in a pack object: its record batch `index` in the stream at `key` (and its byte `span`, for packs written since spans exist). */
export interface PackRef {
  key: string;
  index: number;
  span?: PackSpan;
}

/** How long a ref is kept: as long as the feed remembers a released uid (7 days). */
const RETENTION_MS = 7 * 24 * 3_600_000;

/** The `group_packs` table of a feed shard. */
export class PackIndex {
  readonly #sql: SqlPort;

  constructor(sql: SqlPort) {
    this.#sql = sql;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS group_packs (uid TEXT PRIMARY KEY, key TEXT NOT NULL, batch_index INTEGER NOT NULL, packed_at INTEGER NOT NULL)`,
    );
    sql.exec(`CREATE INDEX IF NOT EXISTS group_packs_at ON group_packs (packed_at)`);
    // A table made before spans existed gets the column; its older refs have none (read whole).
    const columns = sql.exec<{ name: string }>(`PRAGMA table_info(group_packs)`).toArray();
    if (!columns.some((c) => c.name === "span"))
      sql.exec(`ALTER TABLE group_packs ADD COLUMN span TEXT`);
  }

  /** Records where groups were packed (a later pack of the same uid replaces the ref) and forgets refs past retention. */
  record(refs: Array<{ uid: string } & PackRef>, now: number): void {
    for (const ref of refs) {
      const span = ref.span ? JSON.stringify(ref.span) : null;
      this.#sql.exec(
        `INSERT INTO group_packs (uid, key, batch_index, packed_at, span) VALUES (?, ?, ?, ?, ?) ON CONFLICT(uid) DO UPDATE SET key = excluded.key, batch_index = excluded.batch_index, packed_at = excluded.packed_at, span = excluded.span`,
        ref.uid,
        ref.key,
        ref.index,
        now,
        span,
      );
    }
    this.#sql.exec(`DELETE FROM group_packs WHERE packed_at < ?`, now - RETENTION_MS);
  }

  /**
   * The ready groups that have a ref with a byte span, in the order the feed leases them (its
   * `feed_groups` table, read only), with their batch: what pack compaction chooses from.
   */
  readySpannedRefs(): Array<{ uid: string; batch_id: string | null; ref: PackRef }> {
    const rows = this.#sql
      .exec<{
        uid: string;
        batch_id: string | null;
        key: string;
        batch_index: number;
        span: string;
      }>(
        `SELECT p.uid, g.batch_id, p.key, p.batch_index, p.span FROM feed_groups g JOIN group_packs p ON p.uid = g.uid
       WHERE g.state = 'ready' AND p.span IS NOT NULL ORDER BY g.ready_at, g.created_at, g.uid`,
      )
      .toArray();
    return rows.map((row) => ({
      uid: row.uid,
      batch_id: row.batch_id,
      ref: { key: row.key, index: row.batch_index, span: JSON.parse(row.span) as PackSpan },
    }));
  }

  /**
   * Points groups at their compacted pack, each only if its ref is still the one compacted (a
   * later pack of the group, or another compaction, wins). Returns how many moved.
   */
  move(moves: Array<{ uid: string; from: PackRef; to: PackRef }>, now: number): number {
    let moved = 0;
    for (const { uid, from, to } of moves) {
      moved += this.#sql
        .exec(
          `UPDATE group_packs SET key = ?, batch_index = ?, span = ?, packed_at = ? WHERE uid = ? AND key = ? AND batch_index = ? RETURNING uid`,
          to.key,
          to.index,
          to.span ? JSON.stringify(to.span) : null,
          now,
          uid,
          from.key,
          from.index,
        )
        .toArray().length;
    }
    return moved;
  }

  /** The refs of `uids` that have one. */
  refsOf(uids: string[]): Record<string, PackRef> {
    const out: Record<string, PackRef> = {};
    for (const uid of uids) {
      const row = this.#sql
        .exec<{ key: string; batch_index: number; span: string | null }>(
          `SELECT key, batch_index, span FROM group_packs WHERE uid = ?`,
          uid,
        )
        .toArray()[0];
      if (row)
        out[uid] = {
          key: row.key,
          index: row.batch_index,
          ...(row.span ? { span: JSON.parse(row.span) as PackSpan } : {}),
        };
    }
    return out;
  }
}
