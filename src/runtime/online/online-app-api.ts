/** @module What an OnlineApp object offers over RPC: the interface the class implements and its stubs are typed by. */
import { methodNames } from "../../rpc-surface";
import type { AppId, AppSettings, FeedbackEvent, OnlineSessionView } from "../../schemas/online";
import type { FeedbackResult, OpenedSession } from "./online-app-core";

/** One application's online sessions (one object per application, named by its id). */
export interface OnlineAppApi {
  /** Opens a session on `version` (or answers the stored one: sticky), placing it in its prompt key's group. */
  openSession(
    appId: AppId,
    sessionId: string,
    version: number,
    promptKey: string | null,
    settings: AppSettings,
  ): Promise<OpenedSession>;
  /** One session, or null. */
  session(appId: AppId, sessionId: string): OnlineSessionView | null;
  /** The newest sessions. */
  listSessions(appId: AppId, limit?: number): OnlineSessionView[];
  /** Adds feedback to an open session. */
  addFeedback(appId: AppId, sessionId: string, event: Omit<FeedbackEvent, "at">): FeedbackResult;
  /** Deletes a session, its object and records; false when unknown. */
  deleteSession(appId: AppId, sessionId: string): Promise<boolean>;
}

/** Every method of OnlineAppApi, at run time. */
export const ONLINE_APP_METHODS = methodNames<OnlineAppApi>({
  openSession: true,
  session: true,
  listSessions: true,
  addFeedback: true,
  deleteSession: true,
});
