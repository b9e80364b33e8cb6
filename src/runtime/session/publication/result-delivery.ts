/**
 * @module Confirming that a published result reached the trainer feed, and re-sending it when the
 * feed does not hold it: the session's delivery checks (sent down the results queue, answered by
 * the results consumer, `src/runtime/feed/delivery-checks.ts`).
 */
import { describeError } from "../../../errors";
import { dataManagers } from "../../../training/training-modes";
import type { PublicationDelivery } from "../../../schemas/rollout-api";
import { publishResult } from "./publish-result";
import type { SessionKernel } from "../kernel";

/**
 * When the feed is asked (through the results consumer) whether it holds the result, counted from
 * publication: each check that finds it missing sends the result again. The queue normally delivers in well under a second;
 * the first check leaves room for its retries, the later ones for a feed that is down a while.
 */
export const DELIVERY_CHECK_DELAYS_MS = [
  15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
] as const;

/** Whether this rollout's result goes to the trainer feed (and the feed can be asked about it). */
function feedsTrainer(kernel: SessionKernel): boolean {
  const group = kernel.spec?.group;
  return Boolean(
    group &&
    kernel.deps.sink?.requestDeliveryCheck &&
    dataManagers.get(group.data_manager)?.feeds_trainer,
  );
}

/**
 * The delivery record a publication starts with: its first check due after the first delay, or
 * null when the result does not go to the trainer feed (nothing to confirm).
 */
export function firstDeliveryCheck(kernel: SessionKernel, now: number): PublicationDelivery | null {
  if (!feedsTrainer(kernel)) return null;
  return {
    checks: 0,
    next_check_at: now + DELIVERY_CHECK_DELAYS_MS[0],
    confirmed_at: null,
    gave_up: false,
  };
}

/**
 * A due delivery check: the session does not ask the feed itself (one request per rollout to a
 * shared object) but sends a `delivery_check` message down the results queue; the results
 * consumer asks each feed shard once for a whole batch of checks and answers each session
 * (`onDeliveryChecked`). Behind its own result in the queue, a check rarely overtakes it. The next
 * check is scheduled now, so a lost check or answer is asked again; when the last one went
 * unanswered it gives up loudly (logged, and visible in the rollout's `publication.delivery`).
 */
export async function checkDelivery(kernel: SessionKernel): Promise<boolean> {
  const spec = kernel.spec!;
  const state = kernel.state!;
  const delivery = state.publication.delivery;
  const now = kernel.deps.now();
  if (!delivery || delivery.next_check_at === null) return false;
  if (now < delivery.next_check_at) {
    await kernel.deps.storage.setAlarm(delivery.next_check_at);
    return true;
  }
  let next: PublicationDelivery;
  if (delivery.checks >= DELIVERY_CHECK_DELAYS_MS.length) {
    next = { ...delivery, next_check_at: null, gave_up: true };
    console.error(
      "the trainer feed never confirmed this rollout's result; giving up re-sending it",
      { rollout_id: spec.rollout_id, checks: delivery.checks },
    );
  } else {
    try {
      await kernel.deps.sink!.requestDeliveryCheck!(
        spec.rollout_id,
        spec.group?.uid ?? spec.rollout_id,
      );
      const checks = delivery.checks + 1;
      // After the last check, one more wait for its answer before giving up.
      next = {
        ...delivery,
        checks,
        next_check_at: now + (DELIVERY_CHECK_DELAYS_MS[checks] ?? DELIVERY_CHECK_DELAYS_MS.at(-1)!),
      };
    } catch (error) {
      // The queue is unreachable: try again at the same pace, without counting a check.
      next = {
        ...delivery,
        next_check_at:
          now + (DELIVERY_CHECK_DELAYS_MS[delivery.checks] ?? DELIVERY_CHECK_DELAYS_MS.at(-1)!),
      };
      console.error("sending a rollout's delivery check failed", {
        rollout_id: spec.rollout_id,
        error: describeError(error),
      });
    }
  }
  kernel.save({ ...kernel.state!, publication: { ...state.publication, delivery: next } });
  if (next.next_check_at !== null) await kernel.deps.storage.setAlarm(next.next_check_at);
  return true;
}

/**
 * The results consumer's answer to a delivery check: `held`, the delivery is confirmed and no
 * check is due any more; not held, the result is sent again (every write idempotent) and the
 * check already scheduled asks again, or, after the last, it gives up loudly. An answer to a
 * confirmed (or given up) delivery changes nothing: answers may repeat (queues deliver at least once).
 * The re-send is returned, not awaited: the consumer that asked must not wait on a publication
 * that sends to its own queue (locally, Miniflare's broker waits for the batch in hand: a
 * deadlock); if the object goes before it is done, the next scheduled check re-sends.
 */
export async function onDeliveryChecked(
  kernel: SessionKernel,
  held: boolean,
): Promise<{ resending?: Promise<void> }> {
  const spec = kernel.spec;
  const state = kernel.state;
  const delivery = state?.publication.delivery;
  if (
    !spec ||
    !state ||
    state.publication.status !== "published" ||
    !delivery ||
    delivery.next_check_at === null
  )
    return {};
  if (held) {
    kernel.save({
      ...state,
      publication: {
        ...state.publication,
        delivery: { ...delivery, next_check_at: null, confirmed_at: kernel.deps.now() },
      },
    });
    await kernel.deps.storage.deleteAlarm?.();
    return {};
  }
  const last = delivery.checks >= DELIVERY_CHECK_DELAYS_MS.length;
  if (last) {
    console.error(
      "the trainer feed never confirmed this rollout's result; giving up re-sending it",
      { rollout_id: spec.rollout_id, checks: delivery.checks },
    );
    kernel.save({
      ...state,
      publication: {
        ...state.publication,
        delivery: { ...delivery, next_check_at: null, gave_up: true },
      },
    });
    await kernel.deps.storage.deleteAlarm?.();
  }
  // The scheduled check asks again (and re-sends then) if this fails.
  const resending = publishResult(kernel).catch((error: unknown) =>
    console.error("re-sending a rollout's result failed", {
      rollout_id: spec.rollout_id,
      error: describeError(error),
    }),
  );
  return { resending };
}
