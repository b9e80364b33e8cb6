/**
 * @module Where the trainer feed's groups live: `FEED_SHARDS` feed objects, a group in the shard
 * its uid hashes to (so a group's members always meet in one object), and, while a deployment
 * changes the count, the shards of the previous layout (`FEED_PREVIOUS_SHARDS`) that still hold
 * groups. One shard is today's single feed, FEED_OBJECT_NAME, so a deployment that never sets the
 * variable keeps its object and its groups. The shards' names and the hash: ../object-names.ts.
 */
import { feedShardIndex, feedShardName, MAX_FEED_SHARDS } from "../object-names";

/** The feed objects in force: the current layout's, then the previous layout's (being drained). */
export interface FeedLayout {
  /** Shard names, by shard index. */
  current: string[];
  /** The previous layout's shard names (empty unless FEED_PREVIOUS_SHARDS is set and differs). */
  previous: string[];
}

/** A variable that does not name a valid count. */
export interface FeedLayoutProblem {
  variable: "FEED_SHARDS" | "FEED_PREVIOUS_SHARDS";
  message: string;
}

function count(
  variable: FeedLayoutProblem["variable"],
  raw: string | undefined,
): number | FeedLayoutProblem {
  if (raw === undefined || raw.trim() === "") return 1;
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isInteger(n) || n < 1 || n > MAX_FEED_SHARDS) {
    return {
      variable,
      message: `${variable} must be an integer 1..${MAX_FEED_SHARDS}, got "${raw}"`,
    };
  }
  return n;
}

/**
 * The layout the variables name, or the problem with one of them. Never a guess: a wrong count
 * would put a group's later members in another object than its first ones.
 */
export function feedLayout(vars: {
  FEED_SHARDS?: string;
  FEED_PREVIOUS_SHARDS?: string;
}): FeedLayout | FeedLayoutProblem {
  const current = count("FEED_SHARDS", vars.FEED_SHARDS);
  if (typeof current !== "number") return current;
  const previous =
    vars.FEED_PREVIOUS_SHARDS === undefined
      ? current
      : count("FEED_PREVIOUS_SHARDS", vars.FEED_PREVIOUS_SHARDS);
  if (typeof previous !== "number") return previous;
  const names = (n: number) => Array.from({ length: n }, (_, k) => feedShardName(k, n));
  return { current: names(current), previous: previous === current ? [] : names(previous) };
}

/** Whether `layout` is a problem rather than a layout. */
export function isLayoutProblem(
  layout: FeedLayout | FeedLayoutProblem,
): layout is FeedLayoutProblem {
  return "variable" in layout;
}

/** The current shard that holds (or will hold) group `uid`. */
export function currentShardOf(layout: FeedLayout, uid: string): string {
  return layout.current[feedShardIndex(uid, layout.current.length)]!;
}

/** The previous layout's shard of `uid`, if a previous layout is being drained. */
export function previousShardOf(layout: FeedLayout, uid: string): string | undefined {
  return layout.previous.length === 0
    ? undefined
    : layout.previous[feedShardIndex(uid, layout.previous.length)];
}

/** Every object a pull, an ack or the stats must reach: current shards, then previous ones. */
export function allShards(layout: FeedLayout): string[] {
  return [...layout.current, ...layout.previous.filter((name) => !layout.current.includes(name))];
}
