/** @module `/v1/feed`: the trainer pulls complete GRPO groups under a lease, acks them, reads stats. */
import { objects } from "../src/runtime/objects";
import { Hono } from "hono";
import { r2SizedReader, streamSpans } from "../src/sink/publication";
import { ConflictError, InvalidInputError, NotAcceptableError } from "../src/errors";
import {
  AcceptHeader,
  encodeArrowPullChunks,
  encodeStreamedPullHead,
  inlineGroups,
  MAX_INLINE_BYTES,
  MAX_INLINE_GROUPS,
  MAX_INLINE_MEMBERS,
  MAX_STREAMED_BYTES,
  negotiatePullFormat,
  planStreamedPull,
  PULL_MEDIA_TYPES,
  readPulledSamples,
  type FieldIssue,
} from "../src/runtime/feed";
import { ARROW_EOS } from "../src/sink/formats/arrow";
import { AckRequest, FeedConfigUpdate, PullRequest, StatsQuery } from "../src/schemas/feed";
import { trainingModes } from "../src/training";
import type { AppEnv } from "./env";
import { fieldProblems, parseJsonBody } from "./middleware/problem-details";

function invalid(errors: FieldIssue[]): InvalidInputError {
  return new InvalidInputError(errors.map((e) => `${e.path}: ${e.message}`).join("; "), {
    status: 422,
    details: errors,
  });
}

/** Routes under `/v1/feed`: `POST /pull`, `POST /ack`, `GET /stats`, `GET /requests`, `GET|PUT /config`. */
export function feedRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();
  // A FEED_SHARDS the Worker cannot read is answered on every feed route (503 naming it), never guessed.
  routes.use("*", async (c, next) => {
    objects(c.env).feedLayout();
    await next();
  });

  routes.post("/pull", async (c) => {
    // Negotiated before anything is leased: a 406 takes nothing from the feed.
    const accept = AcceptHeader.safeParse(c.req.header("accept"));
    if (!accept.success)
      throw invalid([{ path: "accept", message: accept.error.issues[0]!.message }]);
    const format = negotiatePullFormat(accept.data);
    if (format === null) {
      const why = `Accept allows neither ${PULL_MEDIA_TYPES.json} nor ${PULL_MEDIA_TYPES.arrow}`;
      throw new NotAcceptableError(why, { details: [{ path: "accept", message: why }] });
    }
    const body = await parseJsonBody(c, PullRequest);
    if (body.training_mode !== undefined) trainingModes.resolve(body.training_mode);
    // An Arrow pull always carries the samples: they are what the format is for.
    const inline = body.inline || format === "arrow";
    // Staleness is judged against the version in force now; the feed object never calls the policy itself.
    const started = Date.now();
    const { policy_version } = (await objects(c.env).policy().fence()).snapshot;
    const feed = objects(c.env).feed();
    // An inline pull reads every group's pack (or its members) here: lease no more than one invocation may read.
    const leased = inline
      ? { ...body, max_groups: Math.min(body.max_groups ?? MAX_INLINE_GROUPS, MAX_INLINE_GROUPS) }
      : body;
    const pulled = await feed.pull(
      leased,
      policy_version,
      inline ? { max_members: MAX_INLINE_MEMBERS } : {},
    );
    if (!pulled.ok) throw invalid(pulled.errors);
    const { ok: _ok, pack_refs: packs, ...response } = pulled;
    c.header("vary", "accept");
    if (!inline) return c.json(response);
    const feedMs = Date.now() - started;
    // Every group's batch has a byte span in its pack: stream them from R2, nothing read here.
    // The caller's max_bytes narrows the server's own budget, never widens it.
    const budget = (serverMax: number) => Math.min(body.max_bytes ?? serverMax, serverMax);
    const plan =
      format === "arrow" && c.env.FEED_STREAMED_PULLS !== "off"
        ? planStreamedPull(response.groups, packs ?? {}, budget(MAX_STREAMED_BYTES))
        : null;
    if (plan) {
      const back =
        plan.returned.length > 0 ? await feed.returnGroups(response.lease_id!, plan.returned) : 0;
      const { body: streamed, length } = streamSpans(
        c.env.TRAJECTORIES,
        encodeStreamedPullHead(response, plan),
        plan.reads,
        ARROW_EOS,
      );
      // `streamed`: the samples' bytes come from R2 as the body is sent (no R2 time before the answer), in `reads` range reads;
      // `returned`: groups over the byte budget, and how many of them the feed took back.
      const timing = `feed;dur=${feedMs}, r2;dur=0;desc="${plan.reads.length} reads", encode;dur=${Date.now() - started - feedMs}, streamed, returned;desc="${plan.returned.length}/${back}"`;
      return c.body(streamed, 200, {
        "content-type": PULL_MEDIA_TYPES.arrow,
        "content-length": String(length),
        "server-timing": timing,
      });
    }
    const read = await readPulledSamples(
      r2SizedReader(c.env.TRAJECTORIES),
      response.groups,
      packs,
      budget(MAX_INLINE_BYTES),
    );
    const readMs = Date.now() - started - feedMs;
    // Groups over the byte budget go back to the feed now, not when the lease expires.
    if (read.returned.length > 0) await feed.returnGroups(response.lease_id!, read.returned);
    // Where the pull's time went (the drain bench reads it): feed lease, R2 reads, encoding.
    const timing = () =>
      `feed;dur=${feedMs}, r2;dur=${readMs}, encode;dur=${Date.now() - started - feedMs - readMs}`;
    if (format === "json") {
      const json = JSON.stringify({
        ...response,
        groups: inlineGroups(read.groups),
        returned_groups: read.returned.length,
      });
      return c.body(json, 200, { "content-type": "application/json", "server-timing": timing() });
    }
    const chunks = encodeArrowPullChunks(response, read.groups, read.returned.length);
    const length = chunks.reduce((n, chunk) => n + chunk.length, 0);
    // Streamed chunk by chunk: the packs' record batches go out as read, never copied into one buffer (128 MB an isolate).
    const { readable, writable } = new FixedLengthStream(length);
    const writer = writable.getWriter();
    void (async () => {
      for (const chunk of chunks) await writer.write(chunk);
      await writer.close();
    })().catch((error: unknown) => writer.abort(error).catch(() => undefined));
    return c.body(readable, 200, {
      "content-type": PULL_MEDIA_TYPES.arrow,
      "content-length": String(length),
      "server-timing": timing(),
    });
  });

  routes.post("/ack", async (c) => {
    const { lease_id } = await parseJsonBody(c, AckRequest);
    const acked = await objects(c.env).feed().ack(lease_id);
    if (!acked.ok) {
      const why =
        acked.reason === "lease_expired"
          ? `lease ${lease_id} expired; its groups will be delivered again`
          : `no lease ${lease_id}`;
      throw new ConflictError(why, { details: [{ path: "lease_id", message: why }] });
    }
    const { ok: _ok, ...response } = acked;
    return c.json(response);
  });

  routes.get("/stats", async (c) => {
    // `?batch_id=a&batch_id=b&batch_prefix=x.chunk`: each may repeat.
    const query = StatsQuery.safeParse(c.req.queries());
    if (!query.success) throw invalid(fieldProblems(query.error));
    const [stats, fence] = await Promise.all([
      objects(c.env).feed().stats(query.data),
      objects(c.env).policy().fence(),
    ]);
    return c.json({ policy_version: fence.snapshot.policy_version, ...stats });
  });

  // Each shard's own request counters: how the benches count the feed's requests per rollout.
  routes.get("/requests", async (c) =>
    c.json({ shards: await objects(c.env).feed().requestCounts() }),
  );

  routes.get("/config", async (c) => c.json(await objects(c.env).feed().config()));

  routes.put("/config", async (c) => {
    const patch = await parseJsonBody(c, FeedConfigUpdate);
    const configured = await objects(c.env).feed().configure(patch);
    if (!configured.ok) throw invalid(configured.errors);
    return c.json(configured.config);
  });

  return routes;
}
