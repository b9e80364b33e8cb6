/**
 * @module Waking the Durable Object alarms of a restarted local stack. Measured here (workerd of
 * wrangler 4 / Miniflare): after the process is restarted on its persisted state, no alarm of a
 * Durable Object class fires until some object of that class is used; once one is, the overdue
 * alarms of the whole class fire within seconds. A stack restarted after a crash would otherwise
 * leave every rollout's delivery re-check (the re-send of a result the crash lost from the local,
 * in-memory queue) and every tracker's tick waiting for traffic that may never come. Production
 * schedules alarms itself; this runs only in the local stacks, right after /health answers.
 */

/** One cheap read per class that keeps alarms: a session, a batch tracker and the catalog, the feed, the admission shards. */
const WAKE_PATHS = [
  "/v1/rollouts/__wake-alarms",
  "/v1/batches/__wake-alarms",
  "/v1/batches?limit=1",
  "/v1/feed/stats",
  "/v1/policy/requests",
] as const;

/** Touches one object of each alarm-keeping class; answers (404s included) are ignored, failures too (only speed is at stake). */
export async function wakeDurableObjectAlarms(workerUrl: string, apiToken?: string): Promise<void> {
  const headers: Record<string, string> = apiToken ? { authorization: `Bearer ${apiToken}` } : {};
  await Promise.all(
    WAKE_PATHS.map(async (path) => {
      try {
        const response = await fetch(`${workerUrl}${path}`, {
          headers,
          signal: AbortSignal.timeout(10_000),
        });
        await response.arrayBuffer();
      } catch {
        // The next request of that kind wakes it as well.
      }
    }),
  );
}
