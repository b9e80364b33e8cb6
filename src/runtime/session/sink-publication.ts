/** @module Publishing a finished rollout from its session, with bounded, backed-off retries, and confirming the feed got it. */
import { describeError } from "../../errors";
import { publishRollout } from "../../sink/publication/publish-rollout";
import { dataManagers } from "../../training/training-modes";
import { TERMINAL_STATUSES } from "../../schemas/termination";
import type { PublicationDelivery } from "../../schemas/rollout-api";
import type { SessionKernel } from "./session-kernel";
import { buildRolloutView } from "./session-view";

/** Publication attempts before the rollout is marked `failed` to publish (and logged). */
export const MAX_SINK_ATTEMPTS = 8;

/**
 * When the feed is asked (through the results consumer) whether it holds the result, counted from
 * publication: each check that finds it missing sends the result again. The queue normally delivers in well under a second;
 * the first check leaves room for its retries, the later ones for a feed that is down a while.
 */
export const DELIVERY_CHECK_DELAYS_MS = [15_000, 30_000, 60_000, 120_000, 300_000, 600_000] as const;

/**
 * Publishes the rollout if it is finished and not yet published; afterwards, while its delivery
 * to the trainer feed is unconfirmed, checks it when due and sends the result again. On a
 * publication failure the alarm is set again with exponential backoff (1 s doubling to 5 min);
 * after MAX_SINK_ATTEMPTS it stops and records the error. Returns whether there was anything to do.
 */
export async function publishIfPending(kernel: SessionKernel): Promise<boolean> {
  const spec = kernel.spec;
  const state = kernel.state;
  const sink = kernel.deps.sink;
  if (!spec || !state || !sink || !TERMINAL_STATUSES.has(state.status)) return false;
  if (state.publication.status === "published") return checkDelivery(kernel);
  if (state.publication.status !== "pending") return false;
  // The rollout is over: no call of it is in flight any more (a crashed driver's would be counted).
  if (state.publication.attempts === 0) await kernel.releaseAdmissions(spec.rollout_id);
  try {
    await publish(kernel);
    const now = kernel.deps.now();
    const delivery = feedsTrainer(kernel) ? firstCheck(now) : null;
    kernel.save({ ...kernel.state!, publication: { status: "published", attempts: state.publication.attempts + 1, last_error: null, published_at: now, delivery } });
    if (delivery) await kernel.deps.storage.setAlarm(delivery.next_check_at!);
    // Nothing is left to do: an alarm set for this publication (published here, from the alarm
    // that drove the rollout) would only wake the object to find that out.
    else await kernel.deps.storage.deleteAlarm?.();
  } catch (error) {
    const attempts = state.publication.attempts + 1;
    const failed = attempts >= MAX_SINK_ATTEMPTS;
    kernel.save({ ...kernel.state!, publication: { ...state.publication, status: failed ? "failed" : "pending", attempts, last_error: describeError(error), published_at: null } });
    if (failed) console.error("giving up publishing rollout", { rollout_id: spec.rollout_id, error: describeError(error) });
    else await kernel.deps.storage.setAlarm(kernel.deps.now() + Math.min(300_000, 1000 * 2 ** (attempts - 1)));
  }
  return true;
}

/** Writes the record to R2 and sends the result message (every write idempotent, so it may repeat). */
async function publish(kernel: SessionKernel): Promise<void> {
  const spec = kernel.spec!;
  const state = kernel.state!;
  const store = kernel.store;
  const view = buildRolloutView(spec, state, { steps: store.listSteps().map((stored) => stored.step), calls: store.listCalls(), spans: store.listSpans(), finalMessages: store.readFinalMessages() });
  await publishRollout(kernel.deps.sink!, view, spec.group);
}

/** Whether this rollout's result goes to the trainer feed (and the feed can be asked about it). */
function feedsTrainer(kernel: SessionKernel): boolean {
  const group = kernel.spec?.group;
  return Boolean(group && kernel.deps.sink?.requestDeliveryCheck && dataManagers.get(group.data_manager)?.feeds_trainer);
}

function firstCheck(now: number): PublicationDelivery {
  return { checks: 0, next_check_at: now + DELIVERY_CHECK_DELAYS_MS[0], confirmed_at: null, gave_up: false };
}

/**
 * A due delivery check: the session does not ask the feed itself (one request per rollout to a
 * shared object) but sends a `delivery_check` message down the results queue; the results
 * consumer asks each feed shard once for a whole batch of checks and answers each session
 * (`onDeliveryChecked`). Behind its own result in the queue, a check rarely overtakes it. The next
 * check is scheduled now, so a lost check or answer is asked again; when the last one went
 * unanswered it gives up loudly (logged, and visible in the rollout's `publication.delivery`).
 */
async function checkDelivery(kernel: SessionKernel): Promise<boolean> {
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
    console.error("the trainer feed never confirmed this rollout's result; giving up re-sending it", { rollout_id: spec.rollout_id, checks: delivery.checks });
  } else {
    try {
      await kernel.deps.sink!.requestDeliveryCheck!(spec.rollout_id, spec.group?.uid ?? spec.rollout_id);
      const checks = delivery.checks + 1;
      // After the last check, one more wait for its answer before giving up.
      next = { ...delivery, checks, next_check_at: now + (DELIVERY_CHECK_DELAYS_MS[checks] ?? DELIVERY_CHECK_DELAYS_MS.at(-1)!) };
    } catch (error) {
      // The queue is unreachable: try again at the same pace, without counting a check.
      next = { ...delivery, next_check_at: now + (DELIVERY_CHECK_DELAYS_MS[delivery.checks] ?? DELIVERY_CHECK_DELAYS_MS.at(-1)!) };
      console.error("sending a rollout's delivery check failed", { rollout_id: spec.rollout_id, error: describeError(error) });
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
export async function onDeliveryChecked(kernel: SessionKernel, held: boolean): Promise<{ resending?: Promise<void> }> {
  const spec = kernel.spec;
  const state = kernel.state;
  const delivery = state?.publication.delivery;
  if (!spec || !state || state.publication.status !== "published" || !delivery || delivery.next_check_at === null) return {};
  if (held) {
    kernel.save({ ...state, publication: { ...state.publication, delivery: { ...delivery, next_check_at: null, confirmed_at: kernel.deps.now() } } });
    await kernel.deps.storage.deleteAlarm?.();
    return {};
  }
  const last = delivery.checks >= DELIVERY_CHECK_DELAYS_MS.length;
  if (last) {
    console.error("the trainer feed never confirmed this rollout's result; giving up re-sending it", { rollout_id: spec.rollout_id, checks: delivery.checks });
    kernel.save({ ...state, publication: { ...state.publication, delivery: { ...delivery, next_check_at: null, gave_up: true } } });
    await kernel.deps.storage.deleteAlarm?.();
  }
  // The scheduled check asks again (and re-sends then) if this fails.
  const resending = publish(kernel).catch((error: unknown) => console.error("re-sending a rollout's result failed", { rollout_id: spec.rollout_id, error: describeError(error) }));
  return { resending };
}
