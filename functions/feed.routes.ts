/** @module `/v1/feed`: the trainer pulls complete GRPO groups under a lease, acks them, reads stats. */
import { Hono } from "hono";
import { r2SizedReader } from "../durable-objects/r2-blobs";
import { ConflictError, InvalidInputError } from "../src/errors";
import { inlineSamples, MAX_INLINE_MEMBERS } from "../src/runtime/feed/inline-samples";
import type { FieldIssue } from "../src/runtime/feed/feed-results";
import { AckRequest, FeedConfigUpdate, PullRequest, StatsQuery } from "../src/schemas/feed";
import { trainingModes } from "../src/sink/training-modes";
import type { AppEnv } from "./env";
import { feedStub } from "./feed-stub";
import { fieldProblems, parseJsonBody } from "./middleware/problem-details";
import { policyStub } from "./policy-stub";

function invalid(errors: FieldIssue[]): InvalidInputError {
  return new InvalidInputError(errors.map((e) => `${e.path}: ${e.message}`).join("; "), { status: 422, details: errors });
}

/** Routes under `/v1/feed`: `POST /pull`, `POST /ack`, `GET /stats`, `GET|PUT /config`. */
export function feedRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.post("/pull", async (c) => {
    const body = await parseJsonBody(c, PullRequest);
    if (body.training_mode !== undefined) trainingModes.resolve(body.training_mode);
    // Staleness is judged against the version in force now; the feed object never calls the policy itself.
    const { policy_version } = (await policyStub(c.env).fence()).snapshot;
    const feed = feedStub(c.env);
    // An inline pull reads every member's record here: lease no more members than one invocation may read.
    const pulled = await feed.pull(body, policy_version, body.inline ? { max_members: MAX_INLINE_MEMBERS } : {});
    if (!pulled.ok) throw invalid(pulled.errors);
    const { ok: _ok, ...response } = pulled;
    if (!body.inline) return c.json(response);
    const inlined = await inlineSamples(r2SizedReader(c.env.TRAJECTORIES), response.groups);
    // Groups over the byte budget go back to the feed now, not when the lease expires.
    if (inlined.returned.length > 0) await feed.returnGroups(response.lease_id!, inlined.returned);
    return c.json({ ...response, groups: inlined.groups, returned_groups: inlined.returned.length });
  });

  routes.post("/ack", async (c) => {
    const { lease_id } = await parseJsonBody(c, AckRequest);
    const acked = await feedStub(c.env).ack(lease_id);
    if (!acked.ok) {
      const why = acked.reason === "lease_expired" ? `lease ${lease_id} expired; its groups will be delivered again` : `no lease ${lease_id}`;
      throw new ConflictError(why, { details: [{ path: "lease_id", message: why }] });
    }
    const { ok: _ok, ...response } = acked;
    return c.json(response);
  });

  routes.get("/stats", async (c) => {
    // `?batch_id=a&batch_id=b&batch_prefix=x.chunk`: each may repeat.
    const query = StatsQuery.safeParse(c.req.queries());
    if (!query.success) throw invalid(fieldProblems(query.error));
    const [stats, fence] = await Promise.all([feedStub(c.env).stats(query.data), policyStub(c.env).fence()]);
    return c.json({ policy_version: fence.snapshot.policy_version, ...stats });
  });

  routes.get("/config", async (c) => c.json(await feedStub(c.env).config()));

  routes.put("/config", async (c) => {
    const patch = await parseJsonBody(c, FeedConfigUpdate);
    const configured = await feedStub(c.env).configure(patch);
    if (!configured.ok) throw invalid(configured.errors);
    return c.json(configured.config);
  });

  return routes;
}
