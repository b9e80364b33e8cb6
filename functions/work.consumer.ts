/** @module The ROLLOUT_WORK queue consumer: the durable trigger that gets each rollout driven. */
import { objects } from "../src/runtime/objects";
import { WorkMessage } from "../src/schemas/work-message";
import type { AppEnv } from "./env";
import { consumeEach } from "./queue-messages";

export { driverDeps } from "./driver-deps";

/**
 * Hands each message's rollout to its session, whose alarm drives it through the stateless drive
 * route in an invocation of its own (functions/drive.entrypoint.ts), and acks at once: a
 * consumer invocation never waits for a rollout, so every rollout advances at the same time
 * (miniflare runs one consumer batch at a time) and each has its own connection budget in
 * production (6 per invocation). A malformed message is acknowledged and logged; an unexpected failure is retried by
 * the queue (bounded by max_retries), and the session's watchdog covers anything the queue gives up on.
 */
export async function handleWorkBatch(batch: MessageBatch<unknown>, env: AppEnv): Promise<void> {
  await consumeEach(batch, WorkMessage, "work", async (work) => {
    await objects(env).session(work.rollout_id).requestDrive();
  });
}
