/** @module A table of batches with their progress (overview and batch list). */
import { html } from "hono/html";
import type { ListedBatch } from "../../views/batch-views";
import type { Html } from "../layout";
import { statusBar } from "./charts";
import { num, pill, time } from "./format";

/** Status colours, in the order of a batch's progress bar. */
export const STATUS_COLOURS = [
  { key: "succeeded", color: "#2f8f4e" },
  { key: "failed", color: "#c2413b" },
  { key: "cancelled", color: "#b7791f" },
  { key: "running", color: "#3a5bd9" },
  { key: "queued", color: "#8fa3e8" },
  { key: "not_released", color: "#dfe3ea" },
] as const;

/** Batches, newest first, one row each. */
export function batchTable(batches: readonly ListedBatch[]): Html {
  if (batches.length === 0)
    return html`<p class="muted">No batches yet. Submit one with <code>edge-rollout submit</code> or <code>POST /v1/batches</code>.</p>`;
  return html`<table class="batches"><thead><tr><th>batch</th><th>agent</th><th>mode</th><th>status</th><th style="width:22%">progress</th><th class="num">rollouts</th><th class="num">reward mean</th><th>created</th></tr></thead><tbody>
${batches.map((b) => {
  const p = b.progress;
  const finished = p ? p.counts.succeeded + p.counts.failed + p.counts.cancelled : 0;
  return html`<tr data-batch-id="${b.batch_id}"><td><a href="/batches/${encodeURIComponent(b.batch_id)}">${b.batch_id}</a></td><td>${b.agent}</td><td>${b.mode}</td>
<td>${p ? pill(p.status) : html`<span class="muted">unknown</span>`}</td>
<td>${p ? statusBar(STATUS_COLOURS.map((s) => ({ ...s, count: p.counts[s.key] }))) : ""}</td>
<td class="num">${finished}/${b.rollouts}</td><td class="num" data-field="reward-mean">${num(p?.reward.mean ?? null)}</td><td class="muted">${time(b.created_at)}</td></tr>`;
})}</tbody></table>`;
}
