/**
 * @module A tree batch's own tracker state: its node groups' verdicts and how many tree slots were
 * recorded. A node's group is every child forked from one parent run (a parent that branched is
 * never re-run, so its children share its run id as `parent_id`).
 */
import type { SqlPort } from "../../ports";
import type { FinishedMember, StoredVerdict } from "./group-members";

/** Typed reads and writes over a tracker's tree tables (rows of `rollouts` with a `parent_id`, and `node_verdicts`). */
export class TreeStorage {
  readonly #sql: SqlPort;

  constructor(sql: SqlPort) {
    this.#sql = sql;
  }

  /** Creates the node verdicts table if it does not exist (idempotent; the `parent_id` column is the rollouts table's). */
  migrate(): void {
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS node_verdicts (uid TEXT PRIMARY KEY, verdict TEXT NOT NULL, decided_at INTEGER NOT NULL)`,
    );
  }

  /** Tree child slots recorded so far (first runs: a re-run is the same slot). */
  countSlots(): number {
    return (
      this.#sql
        .exec<{ n: number }>(
          `SELECT COUNT(*) AS n FROM rollouts WHERE parent_id IS NOT NULL AND attempt = 0`,
        )
        .toArray()[0]?.n ?? 0
    );
  }

  /** The current runs forked from `parentId` that finished (a complete node group has `width` of them). */
  finishedChildren(parentId: string): FinishedMember[] {
    return this.#sql
      .exec<{ [K in keyof FinishedMember]: FinishedMember[K] }>(
        `SELECT rollout_id, sample_index, attempt, termination_reason, outcome, metric, reward FROM rollouts
         WHERE parent_id = ? AND superseded = 0 AND status NOT IN ('queued', 'running') ORDER BY rollout_id`,
        parentId,
      )
      .toArray();
  }

  /** Records what became of a complete node group; false if it was decided before. */
  recordVerdict(uid: string, verdict: StoredVerdict, now: number): boolean {
    return (
      this.#sql
        .exec(
          `INSERT OR IGNORE INTO node_verdicts (uid, verdict, decided_at) VALUES (?, ?, ?) RETURNING uid`,
          uid,
          verdict,
          now,
        )
        .toArray().length > 0
    );
  }

  /** Complete node groups by verdict. */
  countVerdicts(): Map<StoredVerdict, number> {
    const rows = this.#sql
      .exec<{ verdict: StoredVerdict; n: number }>(
        `SELECT verdict, COUNT(*) AS n FROM node_verdicts GROUP BY verdict`,
      )
      .toArray();
    return new Map(rows.map((row) => [row.verdict, row.n]));
  }
}
