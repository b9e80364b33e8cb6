/**
 * @module The runner API of the edge-rollout Worker, called through the EDGE_ROLLOUT service binding: the
 * same routes a Python runner uses (claim, heartbeat, events, finish, release), so lease semantics
 * are unchanged. The API token stays here, in the Worker; a sandbox never holds it.
 */
import type { ClaimedRollout, HeartbeatOutcome } from "../../src/schemas/runner-claims";
import type { HarnessEnv } from "./harness-env";

/** The origin service-binding requests carry (the binding ignores the host; the path routes). */
const ORIGIN = "https://edge-rollout.internal";

/** One held attempt: what heartbeats renew and what finish/release name. */
export interface HeldLease {
  rollout_id: string;
  attempt: number;
  runner_id: string;
}

/** A refused runner API call, with its HTTP status (409: the lease is no longer this runner's). */
export class RunnerApiError extends Error {
  override readonly name = "RunnerApiError";
  constructor(
    readonly path: string,
    readonly status: number,
    detail: string,
  ) {
    super(`POST ${path}: ${status} ${detail}`);
  }
}

async function call<T>(env: HarnessEnv, path: string, body: unknown): Promise<T> {
  const response = await env.EDGE_ROLLOUT.fetch(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.API_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok)
    throw new RunnerApiError(path, response.status, (await response.text()).slice(0, 500));
  return (await response.json()) as T;
}

/** `POST /v1/runners/claim` for `agents`, up to `max` attempts leased for `leaseMs`. */
export async function claim(
  env: HarnessEnv,
  runnerId: string,
  agents: string[],
  max: number,
  leaseMs: number,
): Promise<ClaimedRollout[]> {
  const body = { runner_id: runnerId, agents, max: Math.min(max, 32), lease_ms: leaseMs };
  return (await call<{ claimed: ClaimedRollout[] }>(env, "/v1/runners/claim", body)).claimed;
}

/** `POST /v1/runners/heartbeat` for one lease: whether it is still held (false: stop, the attempt is gone). */
export async function heartbeat(
  env: HarnessEnv,
  lease: HeldLease,
  leaseMs: number,
): Promise<boolean> {
  const body = {
    runner_id: lease.runner_id,
    lease_ms: leaseMs,
    leases: [{ rollout_id: lease.rollout_id, attempt: lease.attempt }],
  };
  const { leases } = await call<{ leases: HeartbeatOutcome[] }>(env, "/v1/runners/heartbeat", body);
  return leases[0]?.ok === true;
}

/** `POST /v1/rollouts/:id/events`: the spans the sandbox's agent emitted. */
export async function addEvents(
  env: HarnessEnv,
  rolloutId: string,
  events: unknown[],
): Promise<void> {
  if (events.length > 0) await call(env, `/v1/rollouts/${rolloutId}/events`, { events });
}

/** `POST …/attempts/:n/finish` (a policy outcome) or `…/release` (`crashed`, `shutdown`). */
export async function endAttempt(
  env: HarnessEnv,
  lease: HeldLease,
  how: "finish" | "release",
  body: Record<string, unknown>,
): Promise<void> {
  const path = `/v1/rollouts/${lease.rollout_id}/attempts/${lease.attempt}/${how}`;
  await call(env, path, { ...body, runner_id: lease.runner_id });
}
