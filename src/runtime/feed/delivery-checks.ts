/**
 * @module Sessions' delivery checks, answered in batches by the results consumer: one `holdsMany`
 * per feed shard for all the checks of a consumer batch (not one `holds` per rollout at the shared
 * feed), then each session is told the answer (its own object). At 100k concurrent rollouts
 * ~10,000 checks/s would otherwise reach the feed shards one by one.
 */
import { describeError } from "../../errors";
import type { DeliveryCheckMessage } from "../../schemas/delivery-check-message";
import { eachLimited } from "../each-limited";

/** Answers told to sessions at once: an invocation may hold 6 simultaneous outgoing connections. */
const ANSWER_CONCURRENCY = 6;

/** The feed as the checks need it (in a Worker: the sharded feed). */
export interface FeedHoldsPort {
  holdsMany(checks: Array<{ rollout_id: string; uid: string }>): Promise<boolean[]>;
}

/** Where the answers go (in a Worker: each rollout's RolloutSession). */
export type DeliveryAnswer = (rolloutId: string, held: boolean) => Promise<void>;

/**
 * Tells the sessions of results the feed has just taken that their delivery is confirmed, as a
 * check would once it asked (`holds` is true for every result the feed took, whatever its
 * outcome): the session then drops the check it had scheduled, so a result the feed took costs no
 * alarm run 15 s later, no `delivery_check` message and no shard request to ask. Best effort: a
 * session not told (or told before it recorded its publication, which it then ignores) checks as
 * before; a failure is logged, never retried.
 */
export async function confirmDeliveries(
  answer: DeliveryAnswer,
  rolloutIds: readonly string[],
): Promise<void> {
  await eachLimited([...rolloutIds], ANSWER_CONCURRENCY, async (rolloutId) => {
    try {
      await answer(rolloutId, true);
    } catch (error) {
      console.warn("delivery not confirmed; the session's own check will ask", {
        rollout_id: rolloutId,
        error: describeError(error),
      });
    }
  });
}

/**
 * Asks the feed about every check at once and answers each session. Returns the indices (in
 * `checks`) to retry, with why: all of them when the feed could not be asked, else those whose
 * session could not be told (a repeated answer is harmless: the session ignores it once settled).
 */
export async function answerDeliveryChecks(
  feed: FeedHoldsPort,
  answer: DeliveryAnswer,
  checks: DeliveryCheckMessage[],
): Promise<Map<number, string>> {
  const retry = new Map<number, string>();
  if (checks.length === 0) return retry;
  let held: boolean[];
  try {
    held = await feed.holdsMany(checks.map(({ rollout_id, uid }) => ({ rollout_id, uid })));
  } catch (error) {
    checks.forEach((_, i) => retry.set(i, `trainer feed: ${describeError(error)}`));
    return retry;
  }
  await eachLimited(
    checks.map((_, i) => i),
    ANSWER_CONCURRENCY,
    async (i) => {
      try {
        await answer(checks[i]!.rollout_id, held[i]!);
      } catch (error) {
        retry.set(i, `session ${checks[i]!.rollout_id}: ${describeError(error)}`);
      }
    },
  );
  return retry;
}
