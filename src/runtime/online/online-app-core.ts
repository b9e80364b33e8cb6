/**
 * @module One application's online sessions (one object per application): which sessions it has,
 * the version each was assigned at its first call, their feedback, and the two clocks of each:
 * its feedback window (then it is scored by the feedback rule, or withheld: never scored 0) and
 * its retention (then it is deleted: users' conversations are personal data). Touched once per
 * conversation and once per feedback event, never per model call.
 */
import type { SqlPort } from "../../ports";
import {
  combineFeedback,
  FEEDBACK_RULE,
  onlinePlacement,
  onlineRolloutId,
  type OnlinePlacement,
} from "../../online";
import {
  insertSession,
  migrateSessions,
  placementOf,
  rowOf,
  viewOf,
  type SessionRow,
} from "./online-session-table";
import type {
  AppId,
  AppSettings,
  FeedbackEvent,
  OnlineFields,
  OnlineSessionStatus,
  OnlineSessionView,
} from "../../schemas/online";

/** If closing a session fails (its object unreachable), the alarm tries again this much later. */
const RETRY_MS = 5_000;

/** What closing and deleting a session does to its rollout (its object and its R2 records). */
export interface OnlineSessionPort {
  /** Writes the outcome on the session and ends it: scored (published to the feed) or withheld. */
  close(rolloutId: string, fields: OnlineFields): Promise<void>;
  /** Deletes the session's object and its records. */
  purge(rolloutId: string): Promise<void>;
  /** Reports scored sessions' rewards by version to the split guard (one call per alarm run). */
  report(outcomes: Array<{ version: number; reward: number }>): Promise<void>;
}

/** What the core needs of its object. */
export interface OnlineAppDeps {
  sql: SqlPort;
  sessions: OnlineSessionPort;
  getAlarm(): Promise<number | null>;
  setAlarm(time: number): Promise<void>;
  now(): number;
}

/** A session opened: the stored one (its version wins over the one proposed: sticky) and where its samples go. */
export interface OpenedSession {
  created: boolean;
  session: OnlineSessionView;
  placement: OnlinePlacement;
}

/** Feedback taken, or why not: no such session of this application, or its window closed. */
export type FeedbackResult =
  | { ok: true; session: OnlineSessionView }
  | { ok: false; reason: "not_found" | "closed"; status?: OnlineSessionStatus };

/** The sessions of one application, in SQLite. */
export class OnlineAppCore {
  readonly #deps: OnlineAppDeps;
  readonly #sql: SqlPort;

  constructor(deps: OnlineAppDeps) {
    this.#deps = deps;
    this.#sql = deps.sql;
    migrateSessions(this.#sql);
  }

  /**
   * Opens session `sessionId` of `appId` on `version`, or answers the one stored (its version
   * stays: a new split never moves a running conversation). A prompt key places it in the key's
   * groups, in arrival order.
   */
  async openSession(
    appId: AppId,
    sessionId: string,
    version: number,
    promptKey: string | null,
    settings: AppSettings,
  ): Promise<OpenedSession> {
    const existing = rowOf(this.#sql, sessionId);
    if (existing)
      return {
        created: false,
        session: viewOf(appId, existing),
        placement: placementOf(existing),
      };
    const now = this.#deps.now();
    let ordinal = 0;
    if (promptKey !== null)
      ordinal =
        this.#sql
          .exec<{ sessions: number }>(
            `INSERT INTO prompt_keys (prompt_key, sessions) VALUES (?, 1) ON CONFLICT (prompt_key) DO UPDATE SET sessions = sessions + 1 RETURNING sessions`,
            promptKey,
          )
          .toArray()[0]!.sessions - 1;
    const placement = onlinePlacement(
      appId,
      sessionId,
      promptKey === null
        ? null
        : { key: promptKey, ordinal, groupSize: settings.prompt_group_size },
    );
    const row: SessionRow = {
      session_id: sessionId,
      version,
      prompt_key: promptKey,
      ...placement,
      status: "open",
      created_at: now,
      closes_at: now + settings.feedback_window_ms,
      expires_at: now + settings.retention_ms,
      feedback: "[]",
      reward: null,
    };
    insertSession(this.#sql, row);
    await this.#schedule();
    return { created: true, session: viewOf(appId, row), placement };
  }

  /** One session of this application, or null. */
  session(appId: AppId, sessionId: string): OnlineSessionView | null {
    const row = rowOf(this.#sql, sessionId);
    return row ? viewOf(appId, row) : null;
  }

  /** This application's sessions, newest first (at most `limit`). */
  listSessions(appId: AppId, limit = 100): OnlineSessionView[] {
    return this.#sql
      .exec<SessionRow>(
        `SELECT * FROM sessions ORDER BY created_at DESC, session_id LIMIT ?`,
        limit,
      )
      .toArray()
      .map((row) => viewOf(appId, row));
  }

  /** Adds a feedback event to an open session (its window not yet closed). */
  addFeedback(appId: AppId, sessionId: string, event: Omit<FeedbackEvent, "at">): FeedbackResult {
    const row = rowOf(this.#sql, sessionId);
    if (!row) return { ok: false, reason: "not_found" };
    if (row.status !== "open" || row.closes_at <= this.#deps.now())
      return { ok: false, reason: "closed", status: row.status as OnlineSessionStatus };
    const feedback = [
      ...(JSON.parse(row.feedback) as FeedbackEvent[]),
      { ...event, at: this.#deps.now() },
    ];
    this.#sql.exec(
      `UPDATE sessions SET feedback = ? WHERE session_id = ?`,
      JSON.stringify(feedback),
      sessionId,
    );
    return { ok: true, session: viewOf(appId, { ...row, feedback: JSON.stringify(feedback) }) };
  }

  /** Deletes a session now (its object and records too); false when there is no such session. */
  async deleteSession(appId: AppId, sessionId: string): Promise<boolean> {
    if (!rowOf(this.#sql, sessionId)) return false;
    await this.#deps.sessions.purge(onlineRolloutId(appId, sessionId));
    this.#sql.exec(`DELETE FROM sessions WHERE session_id = ?`, sessionId);
    return true;
  }

  /**
   * The alarm: closes every session whose window has passed (scored by the feedback rule, or
   * withheld without feedback) and deletes every session past its retention; then sets the alarm
   * for the next of either. A session whose object could not be reached is tried again later.
   */
  async onAlarm(appId: AppId): Promise<{ closed: number; deleted: number }> {
    const now = this.#deps.now();
    let closed = 0;
    let deleted = 0;
    let retry = false;
    const scored: Array<{ version: number; reward: number }> = [];
    const due = this.#sql
      .exec<SessionRow>(
        `SELECT * FROM sessions WHERE status = 'open' AND closes_at <= ? ORDER BY closes_at LIMIT 200`,
        now,
      )
      .toArray();
    for (const row of due) {
      const events = JSON.parse(row.feedback) as FeedbackEvent[];
      const reward = combineFeedback(events);
      const status: OnlineSessionStatus = reward === null ? "withheld" : "scored";
      const fields: OnlineFields = {
        app_id: appId,
        session_id: row.session_id,
        version: row.version,
        prompt_key: row.prompt_key,
        status,
        reward,
        rule: FEEDBACK_RULE,
        feedback: events,
      };
      try {
        await this.#deps.sessions.close(onlineRolloutId(appId, row.session_id), fields);
      } catch (error) {
        console.error("closing an online session failed; retried", {
          session_id: row.session_id,
          error: String(error),
        });
        retry = true;
        continue;
      }
      this.#sql.exec(
        `UPDATE sessions SET status = ?, reward = ? WHERE session_id = ?`,
        status,
        reward,
        row.session_id,
      );
      if (reward !== null) scored.push({ version: row.version, reward });
      closed += 1;
    }
    // Best effort: the guard's counts miss these sessions if the control object cannot be reached.
    if (scored.length > 0)
      await this.#deps.sessions.report(scored).catch((error: unknown) =>
        console.error("reporting online outcomes to the split guard failed", {
          error: String(error),
        }),
      );
    const expired = this.#sql
      .exec<SessionRow>(
        `SELECT * FROM sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT 200`,
        now,
      )
      .toArray();
    for (const row of expired) {
      try {
        await this.#deps.sessions.purge(onlineRolloutId(appId, row.session_id));
      } catch (error) {
        console.error("deleting an expired online session failed; retried", {
          session_id: row.session_id,
          error: String(error),
        });
        retry = true;
        continue;
      }
      this.#sql.exec(`DELETE FROM sessions WHERE session_id = ?`, row.session_id);
      deleted += 1;
    }
    await this.#schedule(retry ? now + RETRY_MS : undefined);
    return { closed, deleted };
  }

  /** Sets the alarm to the next window close or expiry (or `sooner`), keeping an earlier one already set. */
  async #schedule(sooner?: number): Promise<void> {
    const next = this.#sql
      .exec<{ at: number | null }>(
        `SELECT MIN(at) AS at FROM (SELECT MIN(closes_at) AS at FROM sessions WHERE status = 'open' UNION ALL SELECT MIN(expires_at) AS at FROM sessions)`,
      )
      .toArray()[0]?.at;
    const candidates = [next, sooner].filter((t): t is number => typeof t === "number");
    if (candidates.length === 0) return;
    const at = Math.min(...candidates);
    const current = await this.#deps.getAlarm();
    if (current === null || current > at || current <= this.#deps.now())
      await this.#deps.setAlarm(at);
  }
}
