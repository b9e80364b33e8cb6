/** @module What a batch knows about the runners working on it: events from sessions, the per-runner view. */
import { z } from "zod";

/** Something a runner did with one attempt of a batch rollout, as its session reports it. */
export const RunnerEvent = z.object({
  runner_id: z.string().min(1).max(120),
  rollout_id: z.string().min(1).max(200),
  attempt: z.int().min(1),
  /** claimed; finished (it reported an outcome); released (handed back at shutdown, or crashed); lost (its lease expired). */
  kind: z.enum(["claimed", "finished", "released", "lost"]),
  /** The lease the runner asked for: a runner not seen for this long is no longer heartbeating. */
  lease_ms: z.int().min(1),
  at: z.number(),
});
export type RunnerEvent = z.infer<typeof RunnerEvent>;

/**
 * One runner as a batch sees it. `heartbeating`: seen (claim, heartbeat, outcome) within its lease;
 * `lost`: a lease of it expired and it has not been seen since; `gone`: it stopped after handing in
 * everything it claimed.
 */
export const BatchRunner = z.object({
  runner_id: z.string(),
  status: z.enum(["heartbeating", "lost", "gone"]),
  claimed: z.int().min(0),
  finished: z.int().min(0),
  released: z.int().min(0),
  lost: z.int().min(0),
  /** Claimed and not yet finished, released or lost. */
  active: z.int().min(0),
  first_seen_at: z.number(),
  last_seen_at: z.number(),
});
export type BatchRunner = z.infer<typeof BatchRunner>;

/** The `runners` part of `GET /v1/batches/:id`. */
export const BatchRunners = z.object({
  total: z.int().min(0),
  heartbeating: z.int().min(0),
  lost: z.int().min(0),
  /** Attempts of this batch lost with their runner (each was offered again as a new attempt, while any were left). */
  lost_attempts: z.int().min(0),
  runners: z.array(BatchRunner),
});
export type BatchRunners = z.infer<typeof BatchRunners>;
