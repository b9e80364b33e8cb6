/** @module `/batches/:id`: progress, pace, rewards (distribution, by data source, over the series), reasons, dropped groups, cancel. */
import { html } from "hono/html";
import { batchThroughput } from "../../../src/runtime/batch";
import type { BatchProgress } from "../../../src/schemas/batch";
import type { BatchSummary, RewardGroup } from "../../../src/schemas/batch-listing";
import type { EvalReport } from "../../../src/schemas/eval-report";
import type { DroppedGroup } from "../../../src/schemas/feed";
import type { BatchRunners } from "../../../src/schemas/batch-runners";
import type { BatchDetail, ListedBatch } from "../../views/batch-views";
import { STATUS_COLOURS } from "../components/batch-rows";
import { histogram, lineChart, statusBar } from "../components/charts";
import { evalTables } from "../components/eval-tables";
import { duration, num, pill, time } from "../components/format";
import type { Html } from "../layout";

/** What the batch page shows. */
export interface BatchPageData {
  progress: BatchDetail;
  summary: BatchSummary;
  /** Batches of the same series, newest first (the chart plots those with a reward). */
  series: ListedBatch[];
  /** The evaluation report, for `val` batches. */
  evaluation: EvalReport | null;
  /** Groups of this batch the trainer feed dropped instead of delivering. */
  dropped: readonly DroppedGroup[];
  now: number;
}

function rollouts(batchId: string, filter: Record<string, string>): string {
  return `/rollouts?${new URLSearchParams({ batch: batchId, ...filter }).toString()}`;
}

function progressCard(p: BatchProgress, now: number): Html {
  const pace = batchThroughput(p, now);
  return html`<section class="card" id="progress"><h2>Progress</h2>
${statusBar(STATUS_COLOURS.map((s) => ({ ...s, count: p.counts[s.key] })))}
<table class="counts"><tbody>
${STATUS_COLOURS.map((s) => html`<tr><th><a href="${rollouts(p.batch_id, { status: s.key })}">${s.key}</a></th><td class="num" data-count="${s.key}">${p.counts[s.key]}</td></tr>`)}
<tr><th>released / rollouts</th><td class="num"><span data-field="released">${p.released}</span> / <span data-field="rollouts">${p.rollouts}</span> (${p.rows} rows × n ${p.n})</td></tr>
<tr><th>in flight (max)</th><td class="num"><span data-field="in-flight">${p.in_flight}</span> (${p.max_concurrent})</td></tr>
${signalRows(p)}
<tr><th>rollouts/s</th><td class="num" data-field="rate">${num(pace.per_second, 2)}</td></tr>
<tr><th>${p.done ? "took" : "ETA"}</th><td class="num" data-field="eta">${p.done ? duration(pace.elapsed_ms) : duration(pace.eta_ms)}</td></tr>
</tbody></table></section>`;
}

function groupTable(
  title: string,
  key: string,
  groups: readonly RewardGroup[],
  batchId: string,
): Html {
  return html`<table class="reward-by-${key}"><thead><tr><th>${title}</th><th class="num">finished</th><th class="num">with reward</th><th class="num">reward mean</th></tr></thead><tbody>
${groups.length === 0 ? html`<tr><td colspan="4" class="muted">nothing finished yet</td></tr>` : ""}
${groups.map((g) => html`<tr data-key="${g.key}"><td><a href="${rollouts(batchId, { [key]: g.key })}">${g.key || "(none)"}</a></td><td class="num">${g.finished}</td><td class="num">${g.rewarded}</td><td class="num" data-field="mean">${num(g.mean)}</td></tr>`)}
</tbody></table>`;
}

function rewardCard(p: BatchProgress, summary: BatchSummary): Html {
  return html`<section class="card" id="reward"><h2>Reward</h2>
<p>mean <strong data-field="reward-mean">${num(p.reward.mean, 4)}</strong> over <span data-field="reward-count">${p.reward.count}</span> finished rollouts</p>
${histogram(summary.histogram.bins)}
${groupTable("data source", "data_source", summary.by_data_source, p.batch_id)}
${summary.by_agent.length > 1 ? groupTable("agent", "agent", summary.by_agent, p.batch_id) : ""}</section>`;
}

function reasonsCard(p: BatchProgress): Html {
  const reasons = Object.entries(p.termination_reasons).sort(([, a], [, b]) => (b ?? 0) - (a ?? 0));
  return html`<section class="card" id="termination"><h2>Termination reasons</h2><table><tbody>
${reasons.length === 0 ? html`<tr><td class="muted">nothing finished yet</td></tr>` : ""}
${reasons.map(([reason, count]) => html`<tr data-reason="${reason}"><td><a href="${rollouts(p.batch_id, { reason })}">${reason}</a></td><td class="num">${count}</td></tr>`)}
</tbody></table></section>`;
}

function seriesCard(current: string, series: readonly ListedBatch[]): Html {
  const points = [...series]
    .reverse()
    .filter((b) => b.progress?.reward.mean !== null && b.progress?.reward.mean !== undefined)
    .map((b) => ({
      label: b.batch_id,
      value: b.progress!.reward.mean!,
      href: `/batches/${encodeURIComponent(b.batch_id)}`,
    }));
  const name = series[0]?.series ?? "";
  return html`<section class="card" id="series"><h2>Reward mean over the series <code>${name}</code> (${points.length} batches) · <a href="/runs/${encodeURIComponent(name)}">run view →</a></h2>${lineChart(points, { yLabel: "reward mean", current })}</section>`;
}

/** Runners (Python or any-language agents) that claimed this batch's external rollouts: claimed, heartbeating, lost. */
function runnersPanel(runners: BatchRunners): Html | string {
  if (runners.total === 0) return "";
  return html`<section class="card" id="runners"><h2>Runners</h2>
<p><span data-field="runners-heartbeating">${runners.heartbeating}</span> heartbeating, <span data-field="runners-lost">${runners.lost}</span> lost of ${runners.total}; ${runners.lost_attempts} attempts lost with their runner (offered again).</p>
<table><thead><tr><th>runner</th><th>status</th><th class="num">active</th><th class="num">claimed</th><th class="num">finished</th><th class="num">released</th><th class="num">lost</th><th>last seen</th></tr></thead><tbody>
${runners.runners.map((r) => html`<tr data-runner-id="${r.runner_id}"><td><code>${r.runner_id}</code></td><td>${pill(r.status === "heartbeating" ? "running" : r.status === "lost" ? "failed" : "cancelled")} ${r.status}</td><td class="num">${r.active}</td><td class="num">${r.claimed}</td><td class="num">${r.finished}</td><td class="num">${r.released}</td><td class="num">${r.lost}</td><td class="muted">${time(r.last_seen_at)}</td></tr>`)}
</tbody></table></section>`;
}

/**
 * What the batch's groups became (delivered with signal, against `target_groups`; filtered for
 * no signal; withheld for an infrastructure failure; cut) and the infrastructure failures re-run.
 */
function signalRows(p: BatchProgress): Html {
  const g = p.groups;
  const target =
    g.target === null
      ? ""
      : html` / <span data-field="target-groups">${g.target}</span>${g.cut_at !== null ? " (met: the rest cut)" : ""}`;
  return html`<tr><th>groups delivered${g.target === null ? "" : " / target"}</th><td class="num"><span data-field="groups-delivered">${g.delivered}</span>${target}</td></tr>
<tr><th>groups filtered · withheld · cut</th><td class="num"><span data-field="groups-filtered">${g.filtered}</span> · <span data-field="groups-withheld">${g.withheld}</span> · <span data-field="groups-cut">${g.cut}</span></td></tr>
<tr><th>retried (infrastructure)</th><td class="num" data-field="retried">${p.retried}</td></tr>
${staleRow(p)}`;
}

/**
 * Groups lost to the staleness rule (dropped when pulled · cancelled while they ran) and the
 * reserve rows released for them; only once any was lost, or while a `wait` batch holds.
 */
function staleRow(p: BatchProgress): Html {
  const r = p.refill;
  if (r.stale + r.cancelled === 0 && r.holding_since === null) return html``;
  const short = r.unreplaced > 0 ? html` (${r.unreplaced} not replaced: budget ${r.budget})` : "";
  const holding = r.holding_since !== null ? " · holding until the trainer catches up" : "";
  return html`<tr><th>groups stale · cancelled · refilled</th><td class="num"><span data-field="groups-stale">${r.stale}</span> · <span data-field="groups-cancelled">${r.cancelled}</span> · <span data-field="groups-refilled">${r.refilled}</span>${short}${holding}</td></tr>`;
}

/** Why a group was dropped, in words: its stale versions, its failed members, or its metric. */
function dropDetail(g: DroppedGroup): string {
  if (g.reason === "no_signal") return `${g.metric ?? "reward"} std ${g.metric_std ?? 0}`;
  if (g.failed_members)
    return g.failed_members
      .map(
        (m) =>
          `#${m.sample_index} ${m.termination_reason ?? m.outcome}${m.member_attempt > 0 ? ` (run ${m.member_attempt + 1})` : ""}`,
      )
      .join(", ");
  return `versions ${g.policy_version_start}–${g.policy_version_end} at ${g.policy_version}, max staleness ${g.max_staleness}`;
}

/**
 * Groups the feed dropped instead of delivering (too stale for their training mode when a pull
 * found them; withheld for an infrastructure failure; filtered for no signal; cut): the trainer
 * will never get them, so the page says which and why. Hidden when none.
 */
function droppedPanel(dropped: readonly DroppedGroup[]): Html | string {
  if (dropped.length === 0) return "";
  return html`<section class="card" id="dropped-groups"><h2>Dropped groups</h2>
<p><span data-field="dropped-count">${dropped.length}</span> groups of this batch were dropped by the trainer feed and will not reach the trainer (<code>GET /v1/batches/:id/dropped-groups</code>).</p>
<table><thead><tr><th>group uid</th><th>training mode</th><th>reason</th><th>why</th><th class="num">arrived / size</th><th class="num">policy versions</th><th class="num">at version</th><th class="num">max staleness</th><th>dropped</th></tr></thead><tbody>
${dropped.map((g) => html`<tr data-uid="${g.uid}"><td><a href="/groups/${encodeURIComponent(g.uid)}"><code>${g.uid}</code></a></td><td>${g.training_mode}</td><td data-field="reason">${g.reason}</td><td data-field="why">${dropDetail(g)}</td><td class="num">${g.arrived} / ${g.group_size}</td><td class="num" data-field="versions">${g.policy_version_start}–${g.policy_version_end}</td><td class="num" data-field="at-version">${g.policy_version}</td><td class="num">${g.max_staleness}</td><td class="muted">${time(g.dropped_at)}</td></tr>`)}
</tbody></table></section>`;
}

/** The batch page's body. */
export function batchPage(data: BatchPageData): Html {
  const p = data.progress;
  const cancel =
    p.done || p.status === "cancelling"
      ? ""
      : html`<form class="inline" method="post" action="/batches/${encodeURIComponent(p.batch_id)}/cancel"><button class="danger" type="submit" id="cancel-batch">Cancel batch</button></form>`;
  return html`<h1>Batch <code data-field="batch-id">${p.batch_id}</code> ${pill(p.status)} ${cancel}</h1>
<p class="muted">agent ${p.agent} · mode ${p.mode} · training mode ${p.training_mode} · data manager ${p.data_manager}${p.dataset_key ? ` · dataset ${p.dataset_key}` : ""} · created ${time(p.created_at)}${p.finished_at ? ` · finished ${time(p.finished_at)}` : ""} · <a href="${rollouts(p.batch_id, {})}">rollouts →</a></p>
<div class="grid">${progressCard(p, data.now)}${reasonsCard(p)}</div>
${runnersPanel(p.runners)}
${droppedPanel(data.dropped)}
${rewardCard(p, data.summary)}
${seriesCard(p.batch_id, data.series)}
${data.evaluation ? html`<section class="card" id="evaluation"><h2>Evaluation</h2>${evalTables(data.evaluation)}</section>` : ""}
${p.done ? "" : html`<p class="muted">This page refreshes every 5 s while the batch runs.</p>`}`;
}
