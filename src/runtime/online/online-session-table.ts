/**
 * @module The sessions table of an application's object: its schema, a row as stored, and a row
 * as its application reads it (src/runtime/online/online-app-core.ts holds the rules).
 */
import type { SqlPort, SqlValue } from "../../ports";
import { onlineRolloutId, type OnlinePlacement } from "../../online";
import type {
  AppId,
  FeedbackEvent,
  OnlineSessionStatus,
  OnlineSessionView,
} from "../../schemas/online";

const MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS sessions (
     session_id TEXT PRIMARY KEY,
     version INTEGER NOT NULL,
     prompt_key TEXT,
     uid TEXT NOT NULL,
     sample_index INTEGER NOT NULL,
     group_size INTEGER NOT NULL,
     status TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     closes_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     feedback TEXT NOT NULL,
     reward REAL
   )`,
  `CREATE INDEX IF NOT EXISTS sessions_closing ON sessions (status, closes_at)`,
  `CREATE INDEX IF NOT EXISTS sessions_expiring ON sessions (expires_at)`,
  `CREATE TABLE IF NOT EXISTS prompt_keys (prompt_key TEXT PRIMARY KEY, sessions INTEGER NOT NULL)`,
];

/** Creates the tables (idempotent). */
export function migrateSessions(sql: SqlPort): void {
  for (const statement of MIGRATIONS) sql.exec(statement);
}

/** A session as stored. */
export interface SessionRow extends Record<string, SqlValue> {
  session_id: string;
  version: number;
  prompt_key: string | null;
  uid: string;
  sample_index: number;
  group_size: number;
  status: string;
  created_at: number;
  closes_at: number;
  expires_at: number;
  feedback: string;
  reward: number | null;
}

/** Stores a new session. */
export function insertSession(sql: SqlPort, row: SessionRow): void {
  sql.exec(
    `INSERT INTO sessions (session_id, version, prompt_key, uid, sample_index, group_size, status, created_at, closes_at, expires_at, feedback, reward) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
    row.session_id,
    row.version,
    row.prompt_key,
    row.uid,
    row.sample_index,
    row.group_size,
    row.status,
    row.created_at,
    row.closes_at,
    row.expires_at,
    row.feedback,
  );
}

/** The stored session `sessionId`, if any. */
export function rowOf(sql: SqlPort, sessionId: string): SessionRow | undefined {
  return sql
    .exec<SessionRow>(`SELECT * FROM sessions WHERE session_id = ?`, sessionId)
    .toArray()[0];
}

/** The view of a stored session of `appId`. */
export function viewOf(appId: AppId, row: SessionRow): OnlineSessionView {
  return {
    session_id: row.session_id,
    rollout_id: onlineRolloutId(appId, row.session_id),
    version: row.version,
    prompt_key: row.prompt_key,
    status: row.status as OnlineSessionStatus,
    created_at: row.created_at,
    closes_at: row.closes_at,
    expires_at: row.expires_at,
    feedback: JSON.parse(row.feedback) as FeedbackEvent[],
    reward: row.reward,
  };
}

/** Where a stored session's samples go. */
export function placementOf(row: SessionRow): OnlinePlacement {
  return { uid: row.uid, sample_index: row.sample_index, group_size: row.group_size };
}
