/** @module Percentiles and medians (several benches) and bench:gateway's printed latency table. */

/** Nearest-rank percentile (p in 0..100) of `values`; NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  ]!;
}

/**
 * The median of `values`, the mean of the middle two for an even count; NaN when empty
 * (loop-report's `median` is the lower one: one of the rounds, never an average).
 */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Mean number of calls in flight as each call started (itself included): how much concurrency
 * the calls really saw, whatever the driver intended. Starts and durations share one clock.
 */
export function meanInFlight(startMs: number[], durationMs: number[]): number {
  let total = 0;
  for (const start of startMs) {
    for (let j = 0; j < startMs.length; j++)
      if (startMs[j]! <= start && start < startMs[j]! + Math.max(durationMs[j]!, 1e-9)) total++;
  }
  return startMs.length === 0 ? Number.NaN : total / startMs.length;
}

/** One measured series: a path's per-call latencies and what the simulator spent on the same calls. */
export interface Series {
  label: string;
  latencyMs: number[];
  /** Start of each call, on the clock `latencyMs` was measured with (for `meanInFlight`). */
  startMs: number[];
  /** The simulator's own service times for this series' calls (see timed-simulator-child.ts). */
  serviceMs: number[];
  /** Calls per second over the timed window, or a note when the window is not comparable. */
  throughput?: string;
}

const COLUMNS = [
  "calls",
  "in flight",
  "p50 ms",
  "p99 ms",
  "server p50",
  "+p50 ms",
  "+p99 ms",
  "×p50",
  "×p99",
  "calls/s",
];
const LABEL_WIDTH = 46;

function cell(text: string, width = 11): string {
  return text.padStart(width);
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : "—");
const signed = (value: number) =>
  Number.isFinite(value) ? `${value >= 0 ? "+" : ""}${value.toFixed(1)}` : "—";
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : "—");

/**
 * Formats the table: p50/p99 per series, the simulator's service p50 for the same calls, and
 * added latency and ratio against `baseline` (differences of percentiles, not percentiles of
 * differences).
 */
export function formatTable(title: string, baseline: Series, rows: Series[]): string {
  const base50 = percentile(baseline.latencyMs, 50);
  const base99 = percentile(baseline.latencyMs, 99);
  const lines = [`${title.padEnd(LABEL_WIDTH)}${COLUMNS.map((c) => cell(c)).join("")}`];
  for (const row of [baseline, ...rows]) {
    const p50 = percentile(row.latencyMs, 50);
    const p99 = percentile(row.latencyMs, 99);
    const isBase = row === baseline;
    lines.push(
      row.label.padEnd(LABEL_WIDTH) +
        [
          String(row.latencyMs.length),
          meanInFlight(row.startMs, row.latencyMs).toFixed(1),
          ms(p50),
          ms(p99),
          ms(percentile(row.serviceMs, 50)),
          isBase ? "—" : signed(p50 - base50),
          isBase ? "—" : signed(p99 - base99),
          isBase ? "—" : ratio(p50 / base50),
          isBase ? "—" : ratio(p99 / base99),
          row.throughput ?? "",
        ]
          .map((c) => cell(c))
          .join(""),
    );
  }
  return lines.join("\n");
}
