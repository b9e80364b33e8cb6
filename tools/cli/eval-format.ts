/** @module An evaluation report (or two side by side) as text tables (pure). */
import type { EvalReport, EvalScores } from "../../src/schemas/eval-report";
import { formatNumber, formatTable } from "./format";

function scores(s: EvalScores | undefined): string[] {
  return s
    ? [
        formatNumber(s.pass_at_1),
        formatNumber(s.pass_at_k),
        formatNumber(s.mean_reward),
        String(s.samples),
      ]
    : ["-", "-", "-", "-"];
}

/** pass@1 / pass@k / mean reward overall and per data source, then failures by termination reason; `other` adds the compared run's columns. */
export function formatEvalReport(report: EvalReport, other?: EvalReport): string {
  const runs = other ? [report, other] : [report];
  const header = [
    "data_source",
    ...runs.flatMap((r) => [`pass@1 ${r.batch_id}`, `pass@${r.k}`, "mean reward", "samples"]),
  ];
  const sources = [
    ...new Set(runs.flatMap((r) => r.by_data_source.map((d) => d.data_source))),
  ].sort();
  const rows = [
    header,
    ["(all)", ...runs.flatMap((r) => scores(r.total))],
    ...sources.map((source) => [
      source || "(none)",
      ...runs.flatMap((r) => scores(r.by_data_source.find((d) => d.data_source === source))),
    ]),
  ];
  const reasons = [...new Set(runs.flatMap((r) => Object.keys(r.failures)))].sort();
  const failures =
    reasons.length === 0
      ? "no failures"
      : formatTable([
          ["termination_reason", ...runs.map((r) => r.batch_id)],
          ...reasons.map((reason) => [reason, ...runs.map((r) => String(r.failures[reason] ?? 0))]),
        ]);
  const intro = runs
    .map(
      (r) =>
        `${r.batch_id}: agent ${r.agent}, n=${r.n}, k=${r.k}, ${r.total.rows} rows scored${r.done ? "" : " (still running)"}`,
    )
    .join("\n");
  const compare =
    other && other.total.pass_at_1 !== null && report.total.pass_at_1 !== null
      ? `\npass@1 difference (${report.batch_id} − ${other.batch_id}): ${(report.total.pass_at_1 - other.total.pass_at_1 >= 0 ? "+" : "") + formatNumber(report.total.pass_at_1 - other.total.pass_at_1)}`
      : "";
  return `${intro}\nA sample passes at reward >= ${report.pass_threshold}; pass@k is the unbiased estimator 1 - C(n-c,k)/C(n,k), averaged over rows.\n\n${formatTable(rows)}${compare}\n\nFailures (did not pass) by termination reason\n${failures}`;
}
