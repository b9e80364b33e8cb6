/** @module `/runs/:series`: a training run's batches in step order, with each step's numbers in a table and as line charts. */
import { html } from "hono/html";
import type { RunStep, RunView } from "../../../src/schemas/run-view";
import { lineChart, type ChartPoint } from "../components/charts";
import { num, pct, pill } from "../components/format";
import type { Html } from "../layout";

function batchHref(batchId: string): string {
  return `/batches/${encodeURIComponent(batchId)}`;
}

/** Share of complete groups whose members all got one reward (no GRPO signal), or null before any is complete. */
export function noSignalShare(step: RunStep): number | null {
  const groups = step.stats?.groups;
  return groups && groups.complete > 0 ? groups.no_signal / groups.complete : null;
}

/** The line charts of the run: one point per step that has the value, each linking to its batch. */
const CHARTS: ReadonlyArray<{
  id: string;
  title: string;
  value: (step: RunStep) => number | null | undefined;
}> = [
  { id: "chart-reward-mean", title: "reward mean", value: (s) => s.progress?.reward.mean },
  { id: "chart-reward-std", title: "reward std", value: (s) => s.stats?.reward.std },
  {
    id: "chart-length-mean",
    title: "response tokens mean",
    value: (s) => s.stats?.response_tokens.mean,
  },
  {
    id: "chart-length-p90",
    title: "response tokens p90",
    value: (s) => s.stats?.response_tokens.p90,
  },
  { id: "chart-no-signal", title: "groups without signal", value: noSignalShare },
  {
    id: "chart-staleness",
    title: "policy version span",
    value: (s) =>
      (s.stats?.policy_version.max ?? null) === null
        ? null
        : s.stats!.policy_version.max! - s.stats!.policy_version.min!,
  },
  { id: "chart-rate", title: "rollouts/s", value: (s) => s.stats?.rollouts_per_s },
  {
    id: "chart-sync-wait",
    title: "weight-sync wait (s)",
    value: (s) => s.weight_syncs.wait_ms / 1000,
  },
  {
    id: "chart-logprob-agreement",
    title: "log-prob max |Δ| (trainer)",
    value: (s) => s.stats?.trainer?.logprob_agreement.max_abs,
  },
  {
    id: "chart-version-spans",
    title: "responses spanning two versions (trainer)",
    value: (s) => s.stats?.trainer?.spanned_responses,
  },
];

function chartCards(steps: readonly RunStep[]): Html[] {
  return CHARTS.map((chart) => {
    const points: ChartPoint[] = steps.flatMap((s) => {
      const value = chart.value(s);
      return value === null || value === undefined
        ? []
        : [{ label: `step ${s.step}`, value, href: batchHref(s.batch_id) }];
    });
    return html`<section class="card"><h2>${chart.title}</h2>${lineChart(points, { yLabel: chart.title, id: chart.id })}</section>`;
  });
}

function reasons(step: RunStep): string {
  const entries = Object.entries(step.progress?.termination_reasons ?? {}).sort(
    ([, a], [, b]) => (b ?? 0) - (a ?? 0),
  );
  return entries.map(([reason, n]) => `${reason} ${n}`).join(" · ") || "–";
}

function stepRow(step: RunStep): Html {
  const p = step.progress;
  const s = step.stats;
  const versions =
    s && s.policy_version.min !== null ? `v${s.policy_version.min}–v${s.policy_version.max}` : "–";
  return html`<tr data-batch-id="${step.batch_id}" data-step="${step.step}"><td class="num">${step.step}</td><td><a href="${batchHref(step.batch_id)}"><code>${step.batch_id}</code></a></td><td>${p ? pill(p.status) : "–"}</td>
<td class="num" data-field="rollouts">${p?.rollouts ?? "–"}</td>
<td class="num"><span data-field="reward-mean">${num(p?.reward.mean, 4)}</span> ± <span data-field="reward-std">${num(s?.reward.std, 4)}</span></td>
<td class="num" data-field="reward-range">${num(s?.reward.min)}–${num(s?.reward.max)}</td>
<td class="num"><span data-field="length-mean">${num(s?.response_tokens.mean, 1)}</span> / <span data-field="length-p90">${num(s?.response_tokens.p90)}</span></td>
<td class="num" data-field="no-signal">${pct(noSignalShare(step))}</td>
<td data-field="reasons">${reasons(step)}</td>
<td class="num" data-field="versions">${versions}</td>
<td class="num" data-field="rate">${num(s?.rollouts_per_s, 2)}</td>
<td class="num"><span data-field="syncs">${step.weight_syncs.count}</span> (<span data-field="sync-wait-ms">${step.weight_syncs.wait_ms}</span> ms)</td>
<td class="num" data-field="logprob-agreement">${s?.trainer ? s.trainer.logprob_agreement.max_abs.toExponential(2) : "–"}</td>
<td class="num" data-field="version-spans">${s?.trainer ? `${s.trainer.spanned_responses} / ${s.trainer.version_mismatches}` : "–"}</td></tr>`;
}

/** The run page's body. */
export function runPage(view: RunView): Html {
  return html`<h1>Run <code data-field="series">${view.series}</code></h1>
<p class="muted"><span data-field="steps">${view.steps.length}</span> batches of series <code>${view.series}</code> in step order (<code>GET /v1/runs/${view.series}</code>). The verl manager names its batches <code>&lt;run&gt;-s&lt;step&gt;-&lt;kind&gt;&lt;call&gt;</code> and sets their series to <code>&lt;run&gt;-&lt;kind&gt;</code>. A weight sync counts for the step during which it began; its wait is how long new model calls were refused. The last two columns are what the trainer reported (<code>PUT /v1/batches/:id/trainer-report</code>): the largest gap between the recorded log-probs and its recompute, and the responses spanning two policy versions / the tokens whose recorded version did not reproduce them.</p>
<section class="card" id="steps"><h2>Steps</h2><table><thead><tr><th class="num">step</th><th>batch</th><th>status</th><th class="num">rollouts</th><th class="num">reward mean ± std</th><th class="num">reward range</th><th class="num">response tokens mean / p90</th><th class="num">no signal</th><th>termination reasons</th><th class="num">policy versions</th><th class="num">rollouts/s</th><th class="num">weight syncs (wait)</th><th class="num">log-prob max |Δ|</th><th class="num">spans / mismatches</th></tr></thead>
<tbody>${view.steps.map(stepRow)}</tbody></table></section>
<div class="grid">${chartCards(view.steps)}</div>`;
}
