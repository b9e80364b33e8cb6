/**
 * @module Names of online sessions: the rollout id a conversation is recorded under, and the group
 * a session's samples join. The app id is part of both, so one application's session id can never
 * reach another's conversation.
 */
import type { AppId } from "../schemas/online";

/** The rollout id of session `sessionId` of `appId`: `online:<app_id>:<session_id>`. */
export function onlineRolloutId(appId: AppId, sessionId: string): string {
  return `online:${appId}:${sessionId}`;
}

/** Where a session's samples go: its group's uid, its index in it, and the group's size. */
export interface OnlinePlacement {
  uid: string;
  sample_index: number;
  group_size: number;
}

/**
 * The placement of the `ordinal`-th session (0-based) that sent prompt key `promptKey`: groups of
 * `groupSize` in arrival order (`online:<app>:p:<key>:<n>`); without a key, a group of one named
 * after the session.
 */
export function onlinePlacement(
  appId: AppId,
  sessionId: string,
  prompt: { key: string; ordinal: number; groupSize: number } | null,
): OnlinePlacement {
  if (!prompt) return { uid: onlineRolloutId(appId, sessionId), sample_index: 0, group_size: 1 };
  const group = Math.floor(prompt.ordinal / prompt.groupSize);
  return {
    uid: `online:${appId}:p:${prompt.key}:${group}`,
    sample_index: prompt.ordinal % prompt.groupSize,
    group_size: prompt.groupSize,
  };
}
