/** @module What the rollout API routes and the dashboard pages read about rollouts. */
import { objects } from "../../src/runtime/objects";
import { InvalidInputError, NotFoundError } from "../../src/errors";
import { RolloutListQuery, type RolloutListEntry } from "../../src/schemas/batch-listing";
import { RolloutId, type RolloutView } from "../../src/schemas/rollout-api";
import type { AppEnv } from "../env";
import type { SseEvent } from "../../src/runtime/session";
import { fieldProblems, parseQuery } from "../middleware/problem-details";
import { batchIdParam, batchRolloutsPage } from "./batch-views";

/** Batches a listing without a batch filter spans: the most recent ones in the catalog. */
export const RECENT_BATCHES_LISTED = 20;

/** Validates a rollout id from a path. */
export function rolloutIdParam(raw: string): string {
  const parsed = RolloutId.safeParse(raw);
  if (!parsed.success)
    throw new InvalidInputError(`rollout_id: ${parsed.error.issues[0]?.message}`, {
      status: 400,
      details: fieldProblems(parsed.error).map((p) => ({ ...p, path: "rollout_id" })),
    });
  return parsed.data;
}

/** `GET /v1/rollouts/:id`: the rollout's view from its session. */
export async function rolloutView(env: AppEnv, rolloutId: string): Promise<RolloutView> {
  const view = await objects(env).session(rolloutId).read();
  if (!view) throw new NotFoundError(`rollout ${rolloutId} does not exist`);
  return view;
}

/** Where a step to resume after comes from: `Last-Event-ID` (set by EventSource on reconnect) or `?after=`. */
function afterStepIndex(lastEventId: string | undefined, after: string | undefined): number {
  const raw = lastEventId ?? after;
  if (raw === undefined || raw === "") return -1;
  const index = Number(raw);
  if (!Number.isInteger(index) || index < -1)
    throw new InvalidInputError("after must be a step index (integer >= -1)", {
      status: 400,
      details: [{ path: "after", message: "must be an integer >= -1" }],
    });
  return index;
}

/**
 * `GET /v1/rollouts/:id/events`: the rollout's SSE stream (a `step` per committed step, then
 * `end`), resumed after a step; with `opening`, that event first (create-and-follow's `created`).
 */
export async function rolloutEvents(
  env: AppEnv,
  rolloutId: string,
  lastEventId: string | undefined,
  after: string | undefined,
  opening?: SseEvent,
): Promise<ReadableStream<Uint8Array>> {
  const stream = await objects(env)
    .session(rolloutId)
    .subscribe(afterStepIndex(lastEventId, after), opening);
  if (!stream) throw new NotFoundError(`rollout ${rolloutId} does not exist`);
  return stream;
}

/** One page of rollouts with each entry's batch, and how many batches the listing spans. */
export interface RolloutsAcross {
  total: number;
  offset: number;
  limit: number;
  rollouts: Array<RolloutListEntry & { batch_id: string }>;
  batches: number;
}

/**
 * Rollouts of one batch (`batch` given) or of the most recent batches, newest batch first, every
 * slot (unreleased ones too) in (row, sample) order, filtered in each batch's own tracker. Across
 * batches the page is found from each batch's filtered count (one small RPC per batch, in parallel),
 * then only the batches the page overlaps are asked for their entries.
 */
export async function rolloutsAcross(
  env: AppEnv,
  raw: Record<string, string>,
): Promise<RolloutsAcross> {
  const { batch, ...rest } = raw;
  const params = { ...rest, include_unreleased: "true" };
  const query = parseQuery(params, RolloutListQuery);
  if (batch) {
    const batchId = batchIdParam(batch);
    const page = await batchRolloutsPage(env, batchId, params);
    return {
      ...page,
      rollouts: page.rollouts.map((r) => ({ ...r, batch_id: batchId })),
      batches: 1,
    };
  }
  const entries = await objects(env).catalog().list({ limit: RECENT_BATCHES_LISTED });
  const counts = await Promise.all(
    entries.map(
      async (entry) =>
        (
          await batchRolloutsPage(env, entry.batch_id, {
            ...params,
            offset: "0",
            limit: "1",
          }).catch(() => null)
        )?.total ?? 0,
    ),
  );
  const total = counts.reduce((sum, n) => sum + n, 0);
  const rollouts: RolloutsAcross["rollouts"] = [];
  let start = 0;
  const wanted: Array<Promise<RolloutsAcross["rollouts"]>> = [];
  entries.forEach((entry, i) => {
    const count = counts[i]!;
    const from = Math.max(query.offset, start);
    const to = Math.min(query.offset + query.limit, start + count);
    if (from < to) {
      const page = batchRolloutsPage(env, entry.batch_id, {
        ...params,
        offset: String(from - start),
        limit: String(to - from),
      });
      wanted.push(page.then((p) => p.rollouts.map((r) => ({ ...r, batch_id: entry.batch_id }))));
    }
    start += count;
  });
  for (const part of await Promise.all(wanted)) rollouts.push(...part);
  return { total, offset: query.offset, limit: query.limit, rollouts, batches: entries.length };
}
