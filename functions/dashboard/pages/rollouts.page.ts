/** @module `/rollouts`: the rollouts table, filtered by batch, agent, status, reason and reward, paginated on the server. */
import { html } from "hono/html";
import { SlotStatus, type RolloutListEntry } from "../../../src/schemas/batch-listing";
import { TerminationReason } from "../../../src/schemas/termination";
import { num, pill } from "../components/format";
import type { Html } from "../layout";

/** The filters as the form holds them (strings from the query). */
export interface RolloutFilters {
  batch: string;
  agent: string;
  status: string;
  reason: string;
  data_source: string;
  reward_min: string;
  reward_max: string;
}

/** One page of rollouts, possibly across several batches. */
export interface RolloutTable {
  total: number;
  offset: number;
  limit: number;
  rollouts: Array<RolloutListEntry & { batch_id: string }>;
  /** Batches the listing spans (one when filtered by batch). */
  batches: number;
}

function pageLink(filters: RolloutFilters, offset: number, limit: number): string {
  const params = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== ""));
  return `/rollouts?${new URLSearchParams({ ...params, offset: String(offset), limit: String(limit) }).toString()}`;
}

function select(name: string, values: readonly string[], current: string): Html {
  return html`<select name="${name}"><option value="">any</option>${values.map((v) => html`<option ${v === current ? "selected" : ""}>${v}</option>`)}</select>`;
}

/** The rollouts page's body. */
export function rolloutsPage(
  table: RolloutTable,
  filters: RolloutFilters,
  elapsedMs: number,
): Html {
  const { total, offset, limit } = table;
  const prev = offset > 0 ? pageLink(filters, Math.max(0, offset - limit), limit) : null;
  const next = offset + limit < total ? pageLink(filters, offset + limit, limit) : null;
  return html`<h1>Rollouts</h1>
<form class="filters card" method="get" action="/rollouts">
<label>batch<input name="batch" value="${filters.batch}" placeholder="all recent batches"></label>
<label>agent<input name="agent" value="${filters.agent}"></label>
<label>status${select("status", SlotStatus.options, filters.status)}</label>
<label>reason${select("reason", TerminationReason.options, filters.reason)}</label>
<label>data source<input name="data_source" value="${filters.data_source}"></label>
<label>reward ≥<input name="reward_min" value="${filters.reward_min}" size="5"></label>
<label>reward ≤<input name="reward_max" value="${filters.reward_max}" size="5"></label>
<button type="submit">Filter</button></form>
<form class="filters" method="get" action="/rollouts/go"><label>open rollout by id<input name="id" size="40"></label><button type="submit">Open</button></form>
<section class="card">
<p><span data-field="total">${total}</span> rollouts${table.batches > 1 ? ` in the ${table.batches} most recent batches` : ""}; showing <span data-field="from">${total === 0 ? 0 : offset + 1}</span>–<span data-field="to">${Math.min(total, offset + limit)}</span>.
<span class="muted">Listed in <span data-field="server-ms">${elapsedMs}</span> ms.</span></p>
<table class="rollouts"><thead><tr><th>rollout</th><th>agent</th><th>data source</th><th>status</th><th>termination</th><th class="num">reward</th></tr></thead><tbody>
${table.rollouts.map(
  (
    r,
  ) => html`<tr data-rollout-id="${r.rollout_id}" data-status="${r.status}"><td>${r.status === "not_released" ? html`<span class="muted">${r.rollout_id}</span>` : html`<a href="/rollouts/${encodeURIComponent(r.rollout_id)}">${r.rollout_id}</a>`}</td>
<td>${r.agent}</td><td>${r.data_source}</td><td>${pill(r.status)}</td><td>${r.termination_reason ?? ""}</td><td class="num" data-field="reward">${num(r.reward)}</td></tr>`,
)}
</tbody></table>
<p>${prev ? html`<a href="${prev}" id="prev-page">← Previous</a>` : ""} ${next ? html`<a href="${next}" id="next-page">Next →</a>` : ""}</p></section>`;
}
