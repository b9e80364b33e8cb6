/** @module Publishing a finished rollout from its session, with bounded, backed-off retries. */
import { describeError } from "../../errors";
import { publishRollout } from "../../sink/publish-rollout";
import { TERMINAL_STATUSES } from "../../schemas/termination";
import type { SessionKernel } from "./session-kernel";
import { buildRolloutView } from "./session-view";

/** Publication attempts before the rollout is marked `failed` to publish (and logged). */
export const MAX_SINK_ATTEMPTS = 8;

/**
 * Publishes the rollout if it is finished and not yet published. On failure the alarm is set
 * again with exponential backoff (1 s doubling to 5 min); after MAX_SINK_ATTEMPTS it stops and
 * records the error,.
 * Returns whether there was anything to do.
 */
export async function publishIfPending(kernel: SessionKernel): Promise<boolean> {
  const spec = kernel.spec;
  const state = kernel.state;
  const sink = kernel.deps.sink;
  if (!spec || !state || !sink || !TERMINAL_STATUSES.has(state.status) || state.sink.status !== "pending") return false;
  // The rollout is over: no call of it is in flight any more (a crashed driver's would be counted).
  if (state.sink.attempts === 0) await kernel.releaseAdmissions(spec.rollout_id);
  const store = kernel.store;
  const view = buildRolloutView(spec, state, { steps: store.listSteps().map((stored) => stored.step), calls: store.listCalls(), spans: store.listSpans(), finalMessages: store.readFinalMessages() });
  try {
    await publishRollout(sink, view, spec.group);
    kernel.save({ ...kernel.state!, sink: { status: "published", attempts: state.sink.attempts + 1, last_error: null, published_at: kernel.deps.now() } });
  } catch (error) {
    const attempts = state.sink.attempts + 1;
    const failed = attempts >= MAX_SINK_ATTEMPTS;
    kernel.save({ ...kernel.state!, sink: { status: failed ? "failed" : "pending", attempts, last_error: describeError(error), published_at: null } });
    if (failed) console.error("giving up publishing rollout", { rollout_id: spec.rollout_id, error: describeError(error) });
    else await kernel.deps.storage.setAlarm(kernel.deps.now() + Math.min(300_000, 1000 * 2 ** (attempts - 1)));
  }
  return true;
}
