/**
 * @module How several feedback events for one session become its reward: the last event of each
 * source counts (a user who changes a thumbs-down to a thumbs-up meant the latter), and the
 * sources are averaged (a user's thumbs and the application's task check weigh alike). No event:
 * no reward (the session is withheld, never scored 0).
 */
import type { FeedbackEvent } from "../schemas/online";

/** The rule's name, as samples carry it (`extra_fields.online.rule`). */
export const FEEDBACK_RULE = "mean_of_last_per_source";

/**
 * The combined reward of `events` (in arrival order): the mean over sources of each source's last
 * reward; null when there are none.
 *
 * @example
 * combineFeedback([{source: "user", reward: 0}, {source: "user", reward: 1}, {source: "task", reward: 0}]) // 0.5
 */
export function combineFeedback(
  events: readonly Pick<FeedbackEvent, "source" | "reward">[],
): number | null {
  const last = new Map<string, number>();
  for (const event of events) last.set(event.source, event.reward);
  if (last.size === 0) return null;
  let sum = 0;
  for (const reward of last.values()) sum += reward;
  return sum / last.size;
}
