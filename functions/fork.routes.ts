/** @module `POST /v1/rollouts/:id/fork`: n children that share the parent's first k steps and continue on their own. */
import { objects } from "../src/runtime/objects";
import { Hono } from "hono";
import { ConflictError, InvalidInputError, NotFoundError } from "../src/errors";
import { eachLimited } from "../src/runtime";
import { type CreateResult, planFork } from "../src/runtime/session";
import { ForkRolloutRequest } from "../src/schemas/rollout-tree";
import { agentRegistry } from "../src/sdk";
import type { AppEnv } from "./env";
import { parseJsonBody } from "./middleware/problem-details";
import { rolloutIdParam } from "./views/rollout-views";

/**
 * Children created at once. Each child's create carries the whole prefix over RPC (a copy in
 * flight per pending call): a few at a time keeps a long conversation × 64 children within the
 * isolate's 128 MB, and every create is idempotent, so a retried request finishes the rest.
 */
const FORK_PARALLELISM = 8;

/** Routes under `/v1/rollouts/:id/fork`. */
export function forkRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.post("/", async (c) => {
    const parentId = rolloutIdParam(c.req.param("id")!);
    const body = await parseJsonBody(c, ForkRolloutRequest);
    const childIds = body.rollout_ids ?? Array.from({ length: body.n }, () => crypto.randomUUID());
    // One read of the parent, which it answers without changing anything.
    const source = await objects(c.env).session(parentId).forkSource(body.at_step);
    if (!source.ok) throw new NotFoundError(`rollout ${parentId} does not exist`);
    const plan = planFork({
      source,
      definition: agentRegistry.get(source.spec.agent),
      body,
      childIds,
      now: Date.now(),
    });
    if (!plan.ok) {
      const message = plan.problems.map((p) => `${p.path}: ${p.message}`).join("; ");
      if (plan.status === 409) throw new ConflictError(message, { details: plan.problems });
      throw new InvalidInputError(message, { status: 422, details: plan.problems });
    }
    const prefix = source.prefix!;
    const results: CreateResult[] = new Array(plan.children.length);
    await eachLimited(
      plan.children.map((spec, i) => ({ spec, i })),
      FORK_PARALLELISM,
      async ({ spec, i }) => {
        results[i] = await objects(c.env).session(spec.rollout_id).createFork(spec, prefix);
      },
    );
    const taken = results.flatMap((result, i) =>
      result.ok ? [] : [{ path: `rollout_ids.${i}`, message: result.message }],
    );
    if (taken.length > 0)
      throw new ConflictError(taken.map((p) => `${p.path}: ${p.message}`).join("; "), {
        details: taken,
      });
    // The parent lists its children (its page links them). Only after they exist, and best effort:
    // the children are made and answered for either way, and the same request again lists them.
    await objects(c.env)
      .session(parentId)
      .recordFork(
        body.at_step,
        plan.children.map((spec) => spec.rollout_id),
      )
      .catch((error: unknown) =>
        console.error("listing a fork's children on its parent failed", {
          parent: parentId,
          error: String(error),
        }),
      );
    const children = plan.children.map((spec, i) => {
      const created = results[i] as Extract<CreateResult, { ok: true }>;
      return {
        rollout_id: spec.rollout_id,
        status: created.status,
        created: created.created,
        tree: spec.tree,
        group: spec.group,
        links: {
          self: `/v1/rollouts/${spec.rollout_id}`,
          events: `/v1/rollouts/${spec.rollout_id}/events`,
        },
      };
    });
    return c.json(
      { parent: parentId, at_step: body.at_step, children },
      children.some((child) => child.created) ? 202 : 200,
    );
  });

  return routes;
}
