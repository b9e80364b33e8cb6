/**
 * @module The serving arm's printed lines: serving minus rollout gateway at p50 and p99, taken
 * within each sequential repeat (median and range over repeats), first calls apart, the
 * concurrent rounds' per-call percentiles, and the deployment-wide objects' request counts.
 */
import { median, percentile } from "../kit/latency-table";
import type { PathCalls, ServingPlan, ServingResults } from "./serving-arm";

/** Median and range of `values`, as `m (lo–hi)` with one decimal and a sign. */
export function medianRange(values: number[]): { median: number; low: number; high: number } {
  return {
    median: median(values),
    low: values.length === 0 ? Number.NaN : Math.min(...values),
    high: values.length === 0 ? Number.NaN : Math.max(...values),
  };
}

/** Per repeat, serving's percentile `q` minus the gateway's, over turns 2.. (the per-call path). */
export function deltasPerRepeat(
  repeats: Array<{ gateway: { laterMs: number[] }; serving: { laterMs: number[] } }>,
  q: number,
): number[] {
  return repeats.map((r) => percentile(r.serving.laterMs, q) - percentile(r.gateway.laterMs, q));
}

const signed = (v: number) => `${v >= 0 ? "+" : ""}${v.toFixed(1)}`;
const spread = (values: number[]) => {
  const { median, low, high } = medianRange(values);
  return `${signed(median)} ms (${signed(low)} – ${signed(high)})`;
};
const pooled = (parts: PathCalls[], key: "firstMs" | "laterMs") => parts.flatMap((p) => p[key]);
const p = (values: number[], q: number) => percentile(values, q).toFixed(1);
const sum = (parts: PathCalls[], key: "policyRequests" | "shardRequests" | "recorded") =>
  parts.reduce((n, part) => n + part[key], 0);
const callsOf = (parts: PathCalls[]) =>
  parts.reduce((n, part) => n + part.firstMs.length + part.laterMs.length, 0);

const meanTokens = (parts: PathCalls[]) => {
  const tokens = parts.flatMap((part) => part.tokens);
  return (tokens.reduce((a, b) => a + b, 0) / Math.max(1, tokens.length)).toFixed(1);
};

/** The arm's lines, ready to print. */
export function formatServingLines(plan: ServingPlan, results: ServingResults): string[] {
  const seq = results.sequential;
  const seqGateway = seq.map((r) => r.gateway);
  const seqServing = seq.map((r) => r.serving);
  const laterPerRepeat = seq[0]?.serving.laterMs.length ?? 0;
  const conc = results.concurrent;
  const concGateway = conc.map((r) => r.gateway);
  const concServing = conc.map((r) => r.serving);
  const rate = (parts: PathCalls[]) =>
    (callsOf(parts) / (parts.reduce((n, part) => n + part.wallMs, 0) / 1000)).toFixed(0);
  const perCall = (n: number, parts: PathCalls[]) => (n / Math.max(1, callsOf(parts))).toFixed(3);
  return [
    `serving arm (issue 55): the same ${plan.turns}-turn conversations through POST /v1/online/chat/completions (application key, x-edge-rollout-session) and through a rollout's gateway (b), same Worker, same simulator`,
    `serving vs rollout gateway: p50 ${spread(deltasPerRepeat(seq, 50))}, p99 ${spread(deltasPerRepeat(seq, 99))}; ` +
      `median (range) over ${seq.length} repeats of ${plan.pairs} alternated conversation pairs, 1 in flight, turns 2–${plan.turns} ` +
      `(${laterPerRepeat} calls per path per repeat: its p99 is its slowest call) (goal: ≤ +1 ms p50)`,
    `  pooled turns 2–${plan.turns}, p50 / p99: gateway ${p(pooled(seqGateway, "laterMs"), 50)} / ${p(pooled(seqGateway, "laterMs"), 99)} ms, ` +
      `serving ${p(pooled(seqServing, "laterMs"), 50)} / ${p(pooled(seqServing, "laterMs"), 99)} ms (${pooled(seqServing, "laterMs").length} calls each)`,
    `  first calls (serving: the session opened, i.e. the app object's openSession and the session's rollout created; gateway: rollout created before the window), ` +
      `${pooled(seqServing, "firstMs").length} each, p50 / p99: gateway ${p(pooled(seqGateway, "firstMs"), 50)} / ${p(pooled(seqGateway, "firstMs"), 99)} ms, ` +
      `serving ${p(pooled(seqServing, "firstMs"), 50)} / ${p(pooled(seqServing, "firstMs"), 99)} ms`,
    `concurrent: ${plan.concurrency} conversations at once, ${conc.length} rounds, paths rotated; per-call p50 / p99, turns 2–${plan.turns}: ` +
      `gateway ${p(pooled(concGateway, "laterMs"), 50)} / ${p(pooled(concGateway, "laterMs"), 99)} ms, ` +
      `serving ${p(pooled(concServing, "laterMs"), 50)} / ${p(pooled(concServing, "laterMs"), 99)} ms ` +
      `(${pooled(concServing, "laterMs").length} calls each); calls/s gateway ${rate(concGateway)}, serving ${rate(concServing)}`,
    `  first calls p50 / p99: gateway ${p(pooled(concGateway, "firstMs"), 50)} / ${p(pooled(concGateway, "firstMs"), 99)} ms, ` +
      `serving ${p(pooled(concServing, "firstMs"), 50)} / ${p(pooled(concServing, "firstMs"), 99)} ms (${pooled(concServing, "firstMs").length} each: one per conversation)`,
    `  deployment-wide objects in the concurrent windows (their own counters, the readings excluded): ` +
      `serving: policy object ${sum(concServing, "policyRequests")}, admission shards ${sum(concServing, "shardRequests")} requests over ${callsOf(concServing)} calls; ` +
      `gateway: policy object ${sum(concGateway, "policyRequests")}, shards ${sum(concGateway, "shardRequests")} (${perCall(sum(concGateway, "shardRequests"), concGateway)} per call) over ${callsOf(concGateway)} calls`,
    `  serving's other shared objects (counters not exposed over HTTP, so counted from the code path): the application's object, once per session at its first call ` +
      `(${pooled(concServing, "firstMs").length} in the concurrent windows, none on turns 2..); the online control object, at most once per 2 s per isolate (the serving split, SERVING_CACHE_MS) and per 5 s (the key, KEY_CACHE_MS)`,
    `  checks: gateway calls recorded ${sum([...seqGateway, ...concGateway], "recorded")}/${callsOf([...seqGateway, ...concGateway])}; ` +
      `sequential calls with the same completion token count on both paths ${results.sameTokens.equal}/${results.sameTokens.compared}; ` +
      `mean completion tokens per call, gateway ${meanTokens([...seqGateway, ...concGateway])}, serving ${meanTokens([...seqServing, ...concServing])}`,
  ];
}
