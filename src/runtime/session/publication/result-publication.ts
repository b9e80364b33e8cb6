/**
 * @module Publishing a finished rollout from its session, with bounded, backed-off retries; once
 * published, the alarm hands over to the delivery checks (`result-delivery.ts`).
 */
import { describeError } from "../../../errors";
import { TERMINAL_STATUSES } from "../../../schemas/termination";
import type { SessionKernel } from "../kernel";
import { publishResult } from "./publish-result";
import { checkDelivery, firstDeliveryCheck } from "./result-delivery";

/** Publication attempts before the rollout is marked `failed` to publish (and logged). */
export const MAX_PUBLICATION_ATTEMPTS = 8;

/**
 * Publishes the rollout if it is finished and not yet published; afterwards, while its delivery
 * to the trainer feed is unconfirmed, checks it when due and sends the result again. On a
 * publication failure the alarm is set again with exponential backoff (1 s doubling to 5 min);
 * after MAX_PUBLICATION_ATTEMPTS it stops and records the error. Returns whether there was anything to do.
 */
export async function publishIfPending(kernel: SessionKernel): Promise<boolean> {
  const spec = kernel.spec;
  const state = kernel.state;
  const sink = kernel.deps.sink;
  if (!spec || !state || !sink || !TERMINAL_STATUSES.has(state.status)) return false;
  if (state.publication.status === "published") return checkDelivery(kernel);
  if (state.publication.status !== "pending") return false;
  // The rollout is over: no call of it is in flight any more (a crashed driver's would be
  // counted). Not asked when its only driver saw every release land: a shard request per rollout.
  if (state.publication.attempts === 0 && !state.admissions_released)
    await kernel.releaseAdmissions(spec.rollout_id);
  try {
    await publishResult(kernel);
    const now = kernel.deps.now();
    const delivery = firstDeliveryCheck(kernel, now);
    kernel.save({
      ...kernel.state!,
      publication: {
        status: "published",
        attempts: state.publication.attempts + 1,
        last_error: null,
        published_at: now,
        delivery,
      },
    });
    if (delivery) await kernel.deps.storage.setAlarm(delivery.next_check_at!);
    // Nothing is left to do: an alarm set for this publication (published here, from the alarm
    // that drove the rollout) would only wake the object to find that out.
    else await kernel.deps.storage.deleteAlarm?.();
  } catch (error) {
    const attempts = state.publication.attempts + 1;
    const failed = attempts >= MAX_PUBLICATION_ATTEMPTS;
    kernel.save({
      ...kernel.state!,
      publication: {
        ...state.publication,
        status: failed ? "failed" : "pending",
        attempts,
        last_error: describeError(error),
        published_at: null,
      },
    });
    if (failed)
      console.error("giving up publishing rollout", {
        rollout_id: spec.rollout_id,
        error: describeError(error),
      });
    else
      await kernel.deps.storage.setAlarm(
        kernel.deps.now() + Math.min(300_000, 1000 * 2 ** (attempts - 1)),
      );
  }
  return true;
}
