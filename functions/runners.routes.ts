/** @module `/v1/runners`: runners claim external rollouts and keep their leases with heartbeats. */
import { objects, type AdmissionShardRpc } from "../src/runtime/objects";
import { Hono } from "hono";
import { rolloutKey } from "../src/gateway";
import type { TakenOffer } from "../src/runtime/claims";
import { claimShardVisitOrder, eachLimited } from "../src/runtime";
import type { ClaimResult } from "../src/runtime/session";
import {
  ClaimRequest,
  type ClaimedRollout,
  HeartbeatRequest,
  type HeartbeatOutcome,
} from "../src/schemas/runner-claims";
import type { JsonValue } from "../src/schemas/json";
import { type AppEnv, gatewaySecret } from "./env";
import { parseJsonBody } from "./middleware/problem-details";

/** Session RPCs one request keeps in flight: production allows 6 simultaneous outgoing connections per invocation. */
const RPC_PARALLELISM = 6;

type Granted = Extract<ClaimResult, { ok: true }>;

/**
 * Takes offers from `agent`'s shards (random start) and asks each rollout's session for the next
 * attempt. An offer is settled (removed) once its session answered, granted or refused; one whose
 * session could not be reached stays hidden and comes back after OFFER_HIDE_MS.
 */
async function claimFromAgent(
  env: AppEnv,
  agent: string,
  body: ClaimRequest,
  granted: Granted[],
): Promise<void> {
  for (const shard of claimShardVisitOrder()) {
    const wanted = body.max - granted.length;
    if (wanted <= 0) return;
    const queue = objects(env).claims(agent, shard);
    const offers = await queue.take(wanted);
    if (offers.length === 0) continue;
    const settled: TakenOffer[] = [];
    await eachLimited(offers, RPC_PARALLELISM, async (offer) => {
      try {
        const result = await objects(env)
          .session(offer.rollout_id)
          .claim(body.runner_id, body.lease_ms);
        settled.push(offer);
        if (result.ok) granted.push(result);
      } catch (error) {
        console.error("claim failed; the offer comes back", {
          rollout_id: offer.rollout_id,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    });
    await queue.settle(settled);
  }
}

/** The latest version of each named resource the runner asked for (missing ones are left out), from `shard`. */
async function latestResources(
  shard: AdmissionShardRpc,
  names: readonly string[],
): Promise<Record<string, JsonValue>> {
  const found = await Promise.all(
    names.map(async (name) => [name, await shard.resource(name)] as const),
  );
  return Object.fromEntries(
    found.flatMap(([name, result]) => (result.ok ? [[name, result.value]] : [])),
  );
}

/** Routes under `/v1/runners`. */
export function runnersRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.post("/claim", async (c) => {
    const body = await parseJsonBody(c, ClaimRequest);
    const granted: Granted[] = [];
    for (const agent of body.agents) await claimFromAgent(c.env, agent, body, granted);
    if (granted.length === 0) return c.json({ runner_id: body.runner_id, claimed: [] });
    // The policy and named resources from the first claimed rollout's admission shard (the fence
    // its calls are admitted under), not the deployment-wide policy object: runners claim one
    // rollout at a time, so at 100k concurrent rollouts of ~10 s that object would get ~10,000
    // reads/s, ten times its ~1,000 req/s.
    const shard = objects(c.env).shard(granted[0]!.spec.rollout_id);
    const [policy, resources] = await Promise.all([
      shard.policySnapshot(),
      latestResources(shard, body.resources),
    ]);
    const origin = new URL(c.req.url).origin;
    const secret = gatewaySecret(c.env);
    const claimed: ClaimedRollout[] = await Promise.all(
      granted.map(async ({ attempt, lease, spec }) => ({
        rollout_id: spec.rollout_id,
        attempt,
        attempt_id: `${spec.rollout_id}/attempt/${attempt}`,
        runner_id: body.runner_id,
        agent: spec.runner ?? spec.agent,
        mode: spec.config.mode,
        task: spec.task,
        config: spec.config,
        group: spec.group,
        lease_expires_at: lease.expires_at,
        llm: {
          base_url: `${origin}/v1/rollouts/${spec.rollout_id}/attempts/${attempt}/llm/v1`,
          endpoint: `${origin}/v1/rollouts/${spec.rollout_id}/attempts/${attempt}/llm/v1`,
          api_key: await rolloutKey(secret, spec.rollout_id),
          model: spec.config.model ?? policy.model ?? c.env.LLM_MODEL,
        },
        resources,
      })),
    );
    return c.json({ runner_id: body.runner_id, claimed });
  });

  routes.post("/heartbeat", async (c) => {
    const body = await parseJsonBody(c, HeartbeatRequest);
    const outcomes: HeartbeatOutcome[] = [];
    const held = new Map<string, Array<{ rollout_id: string; attempt: number }>>();
    await eachLimited(body.leases, RPC_PARALLELISM, async ({ rollout_id, attempt }) => {
      const result = await objects(c.env)
        .session(rollout_id)
        .heartbeat(attempt, body.runner_id, body.lease_ms);
      if (result.ok && result.batch_id)
        held.set(result.batch_id, [...(held.get(result.batch_id) ?? []), { rollout_id, attempt }]);
      outcomes.push(
        result.ok
          ? {
              rollout_id,
              attempt,
              ok: true,
              lease_expires_at: result.lease.expires_at,
              reason: null,
            }
          : { rollout_id, attempt, ok: false, lease_expires_at: null, reason: result.reason },
      );
    });
    // One touch per batch and heartbeat, so `GET /v1/batches/:id` can tell heartbeating runners from
    // lost ones; the attempts it holds are how the batch learns of claims (once each).
    await eachLimited([...held], RPC_PARALLELISM, async ([batchId, attempts]) =>
      objects(c.env).batch(batchId).runnerSeen(body.runner_id, body.lease_ms, attempts),
    );
    return c.json({ runner_id: body.runner_id, leases: outcomes });
  });

  return routes;
}
