/**
 * @module Reads the KV-pressure metrics out of a vLLM server's Prometheus text (`GET /metrics`).
 * vLLM V1 names them `vllm:kv_cache_usage_perc` (a fraction, 1 = full; called
 * `vllm:gpu_cache_usage_perc` before v0.10), `vllm:num_requests_running`,
 * `vllm:num_requests_waiting` and `vllm:num_preemptions_total`, one series per engine
 * (`engine="0"` …, data-parallel ranks behind one API server). The simulator serves the same
 * names (tools/simulator/engine/metrics-text.ts).
 */
import type { ReplicaPressure } from "../../schemas/pressure";

/** The usage metric under its current and its pre-v0.10 name. */
const USAGE_NAMES = ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"];

/** `name{labels} value` (an optional timestamp after the value is ignored). */
const SAMPLE_LINE = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)/;

/**
 * The pressure one replica's metrics text shows, or null when the text has no KV usage metric
 * (not a vLLM server, or one too old): a controller must not read "no data" as "no pressure".
 * Usage is the fullest engine's (one full engine preempts however empty the others are);
 * running, waiting and preemptions are summed over engines.
 */
export function parsePressure(url: string, text: string): ReplicaPressure | null {
  const usage: number[] = [];
  let running = 0;
  let waiting = 0;
  let preemptions = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = SAMPLE_LINE.exec(line.trim());
    if (!match) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    const name = match[1]!;
    if (USAGE_NAMES.includes(name)) usage.push(value);
    else if (name === "vllm:num_requests_running") running += value;
    else if (name === "vllm:num_requests_waiting") waiting += value;
    else if (name === "vllm:num_preemptions_total") preemptions += value;
  }
  if (usage.length === 0) return null;
  return { url, kv_usage: Math.max(...usage), running, waiting, preemptions };
}

/** A backend URL's metrics URL: vLLM serves `/metrics` at the root, beside `/v1`. */
export function metricsUrlOf(serverUrl: string): string {
  return `${serverUrl.replace(/\/+$/, "").replace(/\/v1$/, "")}/metrics`;
}
