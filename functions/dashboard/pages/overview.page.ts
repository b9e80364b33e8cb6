/** @module `/`: policy and sync state, trainer feed by training mode, backends, recent batches. */
import { html } from "hono/html";
import type { OverviewView } from "../../views/overview-view";
import { batchTable } from "../components/batch-rows";
import { duration, num, pill, time } from "../components/format";
import type { Html } from "../layout";

function policyCard(policy: OverviewView["policy"], now: number): Html {
  const sync = policy.syncing
    ? html`${pill("syncing")} since ${time(policy.syncing.since)} (${duration(now - policy.syncing.since)})`
    : html`<span class="ok">serving</span>`;
  return html`<section class="card" id="policy"><h2>Policy</h2><table>
<tr><th>version</th><td data-field="policy-version">${policy.policy_version}</td></tr>
<tr><th>weight sync</th><td data-field="sync-state">${sync}</td></tr>
<tr><th>model calls in flight</th><td data-field="policy-in-flight">${policy.in_flight}</td></tr>
<tr><th>model</th><td>${policy.model ?? html`<span class="muted">deployment default</span>`}</td></tr>
<tr><th>sampling</th><td>temperature ${num(policy.sampling.temperature)}, top_p ${num(policy.sampling.top_p)}</td></tr>
<tr><th>resources</th><td>${policy.resources.length === 0 ? html`<span class="muted">none</span>` : policy.resources.map((r) => html`<code>${r.name}@${r.version}</code> `)}</td></tr>
<tr><th>updated</th><td class="muted">${time(policy.updated_at)}</td></tr></table></section>`;
}

function feedCard(feed: OverviewView["feed"]): Html {
  const modes = Object.entries(feed.by_training_mode).sort(([a], [b]) => a.localeCompare(b));
  return html`<section class="card" id="feed"><h2>Trainer feed</h2>
<table><thead><tr><th>training mode</th><th class="num">pending</th><th class="num">ready</th><th class="num">leased</th><th class="num">delivered</th><th class="num">acked</th><th class="num">dropped stale</th></tr></thead><tbody>
${modes.length === 0 ? html`<tr><td colspan="7" class="muted">nothing ingested yet</td></tr>` : ""}
${modes.map(([mode, c]) => html`<tr data-training-mode="${mode}"><td>${mode}</td><td class="num">${c.pending_groups}</td><td class="num" data-field="ready">${c.ready_groups}</td><td class="num" data-field="leased">${c.leased_groups}</td><td class="num">${c.delivered}</td><td class="num">${c.acked}</td><td class="num" data-field="dropped-stale">${c.dropped_stale}</td></tr>`)}
</tbody><tfoot><tr><th>all</th><td class="num">${feed.pending_groups}</td><td class="num" data-field="ready-total">${feed.ready_groups}</td><td class="num">${feed.leased_groups}</td><td class="num">${feed.delivered}</td><td class="num">${feed.acked}</td><td class="num">${feed.dropped_stale}</td></tr></tfoot></table>
<p class="muted">${feed.ingested} rollouts ingested, ${feed.active_leases} active leases.</p></section>`;
}

function backendsCard(backends: OverviewView["backends"]): Html {
  return html`<section class="card" id="backends"><h2>Backend <code>${backends.backend}</code></h2>
<table><thead><tr><th>replica</th><th>health</th><th class="num">in flight</th></tr></thead><tbody>
${backends.replicas.map((r) => html`<tr data-replica="${r.replica}"><td><code>${r.replica}</code></td><td>${pill(r.healthy ? "healthy" : "unhealthy")}</td><td class="num" data-field="in-flight">${r.in_flight}</td></tr>`)}
</tbody></table><p class="muted">Health and load as this Worker isolate observed them.</p></section>`;
}

/** The overview page's body. */
export function overviewPage(view: OverviewView, now: number): Html {
  return html`<h1>Overview</h1>
<div class="grid">${policyCard(view.policy, now)}${backendsCard(view.backends)}</div>
${feedCard(view.feed)}
<section class="card" id="recent-batches"><h2>Recent batches</h2>${batchTable(view.batches)}<p><a href="/batches">All batches →</a></p></section>`;
}
