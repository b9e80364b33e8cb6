/**
 * @module What the run and group API routes and dashboard pages read: a training run's batches in
 * step order with each step's numbers (`GET /v1/runs/:series`), and one GRPO group's members with
 * the advantages verl would give them (`GET /v1/groups/:uid`).
 */
import { objects } from "../../src/runtime/objects";
import { InvalidInputError, NotFoundError } from "../../src/errors";
import { eachLimited } from "../../src/runtime";
import { grpoAdvantages } from "../../src/runtime/eval";
import type { LlmCall } from "../../src/schemas/llm-call";
import type {
  GroupMember,
  GroupStatus,
  GroupView,
  RunStep,
  RunView,
} from "../../src/schemas/run-view";
import type { AppEnv } from "../env";
import {
  batchDroppedGroups,
  batchIdParam,
  batchProgress,
  batchRolloutsPage,
  listBatches,
} from "./batch-views";

/** Most batches one run view lists (the catalog's page limit). */
export const RUN_STEPS_LISTED = 200;
/** Member sessions read at once for a group view (a Worker invocation has 6 simultaneous outgoing connections). */
const MEMBER_READS = 6;

const SERIES = /^[A-Za-z0-9._:-]{1,160}$/;

/** Validates a series from a path; a bad one is a 400 naming `series`. */
export function seriesParam(raw: string): string {
  if (!SERIES.test(raw))
    throw new InvalidInputError("series: must be 1-160 characters of A-Z a-z 0-9 . _ : -", {
      status: 400,
      details: [{ path: "series", message: "must be 1-160 characters of A-Z a-z 0-9 . _ : -" }],
    });
  return raw;
}

/** The step a batch id names (`<run>-s<step>-<kind><call>`, the verl manager's), or null. */
export function stepOf(batchId: string): number | null {
  const match = /-s(\d+)-[a-z]+\d+$/.exec(batchId);
  return match ? Number(match[1]) : null;
}

/** `GET /v1/runs/:series`: the series' batches oldest first (by step when the ids name one), each with its progress and step numbers. */
export async function runView(env: AppEnv, series: string): Promise<RunView> {
  const listed = await listBatches(env, { series, limit: String(RUN_STEPS_LISTED) });
  if (listed.length === 0) throw new NotFoundError(`no batch of series ${series}`);
  const ordered = [...listed].sort((a, b) => a.created_at - b.created_at);
  const [stats, syncs] = await Promise.all([
    Promise.all(ordered.map((entry) => objects(env).batch(entry.batch_id).stepStats())),
    // One read for the whole run; each sync counts for the step during which it began.
    objects(env)
      .policy()
      .syncs(ordered[0]!.created_at, Date.now() + 1),
  ]);
  const steps: RunStep[] = ordered.map((entry, i) => {
    const until = ordered[i + 1]?.created_at ?? Infinity;
    const mine = syncs.filter((sync) => sync.began_at >= entry.created_at && sync.began_at < until);
    const weight_syncs = {
      count: mine.length,
      wait_ms: mine.reduce((sum, sync) => sum + (sync.ended_at - sync.began_at), 0),
    };
    return {
      step: stepOf(entry.batch_id) ?? i + 1,
      batch_id: entry.batch_id,
      created_at: entry.created_at,
      progress: entry.progress,
      stats: stats[i] ?? null,
      weight_syncs,
    };
  });
  steps.sort((a, b) => a.step - b.step || a.created_at - b.created_at);
  return { series, steps };
}

/** Splits a group uid `<batch_id>:<row>`; a bad one is a 400 naming `uid`. */
export function groupUidParam(raw: string): { batchId: string; row: number } {
  const at = raw.lastIndexOf(":");
  const row = Number(raw.slice(at + 1));
  if (at <= 0 || !/^\d+$/.test(raw.slice(at + 1)) || !Number.isSafeInteger(row)) {
    throw new InvalidInputError("uid: must be <batch_id>:<row_index>", {
      status: 400,
      details: [{ path: "uid", message: "must be <batch_id>:<row_index>" }],
    });
  }
  return { batchId: batchIdParam(raw.slice(0, at)), row };
}

const VERDICT_REASONS: Record<string, string> = {
  deliver: "delivered to the trainer",
  deliver_valid:
    "delivered without its infrastructure failures (deliver_valid): only valid members are scored",
  no_signal:
    "filtered: no signal (its members' metric spread is at or below the batch filter's min_std)",
  infra_failure: "withheld: a member failed for infrastructure after its retries; never trained",
  cut: "cut: the batch met target_groups and cancelled this group's running members; never trained",
  cancelled:
    "cancelled: a member ended STALE while it ran (the policy moved past the training mode's max_staleness), its siblings with it; never trained, refilled from the batch's reserve rows",
};

/** The text of a call's reply (content only: reasoning is apart). */
function replyText(call: LlmCall | undefined): string | null {
  const content = call?.response_message.content;
  if (content === undefined || content === null) return null;
  return typeof content === "string"
    ? content
    : content.map((part) => ("text" in part ? String(part.text) : "")).join("\n");
}

/** `GET /v1/groups/:uid`: the group's members side by side with verl's GRPO and Dr.GRPO advantages, and what became of the group. */
export async function groupView(env: AppEnv, uid: string): Promise<GroupView> {
  const { batchId, row } = groupUidParam(uid);
  const progress = await batchProgress(env, batchId);
  if (row >= progress.rows)
    throw new NotFoundError(`batch ${batchId} has no row ${row} (it has ${progress.rows})`);
  const [page, verdict, dropped] = await Promise.all([
    batchRolloutsPage(env, batchId, {
      include_unreleased: "true",
      offset: String(row * progress.n),
      limit: String(progress.n),
    }),
    objects(env).batch(batchId).groupVerdict(row),
    batchDroppedGroups(env, batchId),
  ]);
  const stale = dropped.dropped_groups.find(
    (group) => group.uid === uid && group.reason === "stale",
  );
  const status: GroupStatus = stale
    ? {
        complete: true,
        verdict: "stale",
        reason: `dropped by the feed as stale: policy v${stale.policy_version_start}–v${stale.policy_version_end} at version ${stale.policy_version} (max staleness ${stale.max_staleness}); never trained`,
      }
    : verdict
      ? {
          complete: true,
          verdict: verdict.verdict,
          reason: VERDICT_REASONS[verdict.verdict] ?? verdict.verdict,
        }
      : { complete: false, verdict: null, reason: "incomplete: members are still running" };
  const trained = status.verdict === "deliver" || status.verdict === "deliver_valid";
  const rewards = new Set(
    page.rollouts.filter((entry) => entry.outcome === "policy").map((entry) => entry.reward ?? 0),
  );
  if (trained && rewards.size === 1)
    status.reason += ` (no signal: every member got reward ${[...rewards][0]}, so every advantage is 0)`;
  const views = new Map<string, { tokens: number; calls: number; answer: string | null }>();
  const read = page.rollouts.filter((entry) => entry.status !== "not_released");
  await eachLimited(read, MEMBER_READS, async (entry) => {
    const view = await objects(env).session(entry.rollout_id).read();
    if (!view) return;
    const policyCalls = view.llm_calls.filter((call) => call.purpose !== "judge");
    views.set(entry.rollout_id, {
      tokens: view.usage.completion_tokens,
      calls: policyCalls.length,
      answer: replyText(policyCalls.at(-1)),
    });
  });
  // verl scores the members it is given: every member of a delivered group, the valid ones of a deliver_valid one.
  const scored = page.rollouts.map((entry) => trained && entry.outcome === "policy");
  const advantages = grpoAdvantages(
    page.rollouts.filter((_, i) => scored[i]).map((entry) => entry.reward ?? 0),
  );
  let k = 0;
  const members: GroupMember[] = page.rollouts.map((entry, i) => {
    const seen = views.get(entry.rollout_id);
    const j = scored[i] ? k++ : -1;
    return {
      sample_index: entry.sample_index,
      rollout_id: entry.status === "not_released" ? null : entry.rollout_id,
      status: entry.status,
      outcome: entry.outcome,
      termination_reason: entry.termination_reason,
      reward: entry.reward,
      scored: scored[i]!,
      advantage_grpo: j >= 0 ? advantages.grpo[j]! : null,
      advantage_drgrpo: j >= 0 ? advantages.drgrpo[j]! : null,
      completion_tokens: seen?.tokens ?? null,
      llm_calls: seen?.calls ?? null,
      final_answer: seen?.answer ?? null,
    };
  });
  return {
    uid,
    batch_id: batchId,
    row_index: row,
    n: progress.n,
    training_mode: progress.training_mode,
    status,
    mean: k > 0 ? advantages.mean : null,
    std: k > 0 ? advantages.std : null,
    members,
  };
}
