/** @module Evaluation tables (pass@1, pass@k, mean reward, per data source, failures), alone or two runs side by side. */
import { html } from "hono/html";
import type { EvalReport, EvalScores } from "../../../src/schemas/eval-report";
import type { Html } from "../layout";
import { num, pct } from "./format";

function scoreCells(s: EvalScores | undefined): Html {
  if (!s)
    return html`<td class="num">–</td><td class="num">–</td><td class="num">–</td><td class="num">–</td>`;
  return html`<td class="num" data-field="pass-at-1">${pct(s.pass_at_1)}</td><td class="num" data-field="pass-at-k">${pct(s.pass_at_k)}</td><td class="num" data-field="mean-reward">${num(s.mean_reward)}</td><td class="num">${s.samples}</td>`;
}

/** The report of one val batch, or two side by side (`other` is the run compared against). */
export function evalTables(report: EvalReport, other?: EvalReport): Html {
  const runs = other ? [report, other] : [report];
  const head = runs.map((r) => html`<th class="num" colspan="4">${r.batch_id}</th>`);
  const sub = runs.map(
    (r) =>
      html`<th class="num">pass@1</th><th class="num">pass@${r.k}</th><th class="num">mean reward</th><th class="num">samples</th>`,
  );
  const sources = [
    ...new Set(runs.flatMap((r) => r.by_data_source.map((d) => d.data_source))),
  ].sort();
  const reasons = [...new Set(runs.flatMap((r) => Object.keys(r.failures)))].sort();
  return html`<div class="eval" data-batch-id="${report.batch_id}">
<p class="muted">A sample passes at reward ≥ ${num(report.pass_threshold)}; pass@k is the unbiased estimator 1 − C(n−c, k)/C(n, k) averaged over rows with at least k finished samples.${report.done ? "" : " The batch is still running: numbers will change."}</p>
<table class="eval-total"><thead><tr><th></th>${head}</tr><tr><th>data source</th>${sub}</tr></thead><tbody>
<tr data-row="all"><th>all</th>${runs.map((r) => scoreCells(r.total))}</tr>
${sources.map((source) => html`<tr data-data-source="${source}"><td>${source || html`<span class="muted">(none)</span>`}</td>${runs.map((r) => scoreCells(r.by_data_source.find((d) => d.data_source === source)))}</tr>`)}
</tbody></table>
<h3>Failures by termination reason</h3>
<table class="eval-failures"><thead><tr><th>reason</th>${runs.map((r) => html`<th class="num">${r.batch_id}</th>`)}</tr></thead><tbody>
${reasons.length === 0 ? html`<tr><td colspan="${runs.length + 1}" class="muted">no failures</td></tr>` : ""}
${reasons.map((reason) => html`<tr data-reason="${reason}"><td>${reason}</td>${runs.map((r) => html`<td class="num">${r.failures[reason] ?? 0}</td>`)}</tr>`)}
</tbody></table></div>`;
}
