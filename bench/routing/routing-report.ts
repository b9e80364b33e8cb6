/** @module What `bench:routing` prints: one line per workload and policy (median and spread over repeats), rankings, ratios. */
import type { RoutingPolicyName } from "../../src/schemas/backend-config";
import { median, percentile } from "../kit/latency-table";
import type { ReplicaCounters } from "./replica-set";
import type { WorkloadResult } from "./routing-workload";

/** One policy's run on one workload. */
export interface PolicyRun {
  workload: string;
  policy: RoutingPolicyName;
  repeat: number;
  result: WorkloadResult;
  counters: ReplicaCounters;
  callsPerSecond: number;
  groupP90s: number;
}

/** A run's summary figures from what it measured. */
export function policyRun(
  workload: string,
  policy: RoutingPolicyName,
  repeat: number,
  result: WorkloadResult,
  counters: ReplicaCounters,
): PolicyRun {
  return {
    workload,
    policy,
    repeat,
    result,
    counters,
    callsPerSecond: result.calls / (result.wallMs / 1000),
    groupP90s: percentile(result.groupMs, 90) / 1000,
  };
}

/** `median (min–max)` with `digits` decimals; just the value for one run. */
export function spread(values: number[], digits: number): string {
  const m = median(values).toFixed(digits);
  if (values.length < 2) return m;
  return `${m} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
}

/** One run's detail: what explains its headline (hits, stacking, the slow replica's share, preemptions). */
export function detailLine(run: PolicyRun, slowIndex: number | null): string {
  const { counters, result } = run;
  const hit = counters.queries > 0 ? ((counters.hits / counters.queries) * 100).toFixed(1) : "-";
  const ttft =
    result.ttftMs.length > 0
      ? `ttft p50 ${percentile(result.ttftMs, 50).toFixed(0)} ms p90 ${percentile(result.ttftMs, 90).toFixed(0)} ms, `
      : "";
  const calls = counters.chatCalls
    .map((count, i) => (i === slowIndex ? `${count} (slow)` : `${count}`))
    .join("/");
  const load = result.maxReplicaLoad > 0 ? `, max replica load ${result.maxReplicaLoad}` : "";
  return `  repeat ${run.repeat + 1}: calls/s ${run.callsPerSecond.toFixed(1)}, group p90 ${run.groupP90s.toFixed(1)} s, ${ttft}prefix hit rate ${hit}%${load}, calls per replica ${calls}, preemptions ${counters.preemptions}, wall ${(result.wallMs / 1000).toFixed(1)} s`;
}

/**
 * The headline line of one workload and policy over its repeats, as issue 52 names it,
 * `<workload> <policy>: calls/s M (a–b), group p90 P s`, then the p90's own range.
 */
export function headline(prefix: string, runs: PolicyRun[]): string {
  const first = runs[0]!;
  const calls = spread(
    runs.map((run) => run.callsPerSecond),
    1,
  );
  const p90s = runs.map((run) => run.groupP90s);
  const p90 = `${median(p90s).toFixed(1)} s`;
  const range =
    runs.length > 1 ? ` (${Math.min(...p90s).toFixed(1)}–${Math.max(...p90s).toFixed(1)})` : "";
  return `${prefix}${first.workload} ${first.policy}: calls/s ${calls}, group p90 ${p90}${range}`;
}

/** Policies best first by median calls/s. */
export function ranking(byPolicy: Map<RoutingPolicyName, PolicyRun[]>): RoutingPolicyName[] {
  return [...byPolicy.entries()]
    .map(([policy, runs]) => ({ policy, value: median(runs.map((run) => run.callsPerSecond)) }))
    .sort((a, b) => b.value - a.value)
    .map((entry) => entry.policy);
}

/**
 * `a ÷ b` of `metric` within each repeat (both runs of one repeat, minutes apart), then the median
 * and range over repeats; null when either policy did not run.
 */
export function ratio(
  byPolicy: Map<RoutingPolicyName, PolicyRun[]>,
  a: RoutingPolicyName,
  b: RoutingPolicyName,
  metric: (run: PolicyRun) => number,
): string | null {
  const over = byPolicy.get(a);
  const under = byPolicy.get(b);
  if (!over || !under) return null;
  const values = over.flatMap((run) => {
    const other = under.find((candidate) => candidate.repeat === run.repeat);
    return other ? [metric(run) / metric(other)] : [];
  });
  if (values.length === 0) return null;
  const range =
    values.length > 1
      ? ` (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`
      : "";
  return `${median(values).toFixed(2)}x${range}`;
}
