/**
 * @module Per-request timing `metrics` (vLLM PR #46768): answered only when the server runs with
 * `--enable-per-request-metrics` and the request asks with `include_metrics: true`, and only for
 * one choice (vLLM suppresses them when timing cannot be attributed to one generation stream).
 * The simulator reports its engine's modelled time (the frontend's `latency.ttftMs`, then the
 * steps the request waited and ran), which the wall clock follows.
 */
import type { EngineRequest } from "./engine/engine-loop";
import type { SimulatorConfig } from "./options";

/** The `metrics` object. */
export interface RequestMetrics {
  time_to_first_token_ms: number;
  generation_time_ms: number;
  queue_time_ms: number;
  mean_itl_ms: number;
  tokens_per_second: number;
}

/** The metrics of a request, or null when the server or the request did not ask for them. */
export function requestMetrics(
  config: Pick<SimulatorConfig, "perRequestMetrics" | "latency">,
  request: { include_metrics?: boolean | null | undefined },
  served: readonly EngineRequest[],
): RequestMetrics | null {
  if (!config.perRequestMetrics || request.include_metrics !== true || served.length !== 1)
    return null;
  const only = served[0]!;
  const tokens = only.output.ids.length;
  const timings = only.timings();
  const ttft = config.latency.ttftMs + timings.firstTokenMs;
  const total = ttft + timings.generationMs;
  return {
    time_to_first_token_ms: ttft,
    generation_time_ms: timings.generationMs,
    queue_time_ms: timings.queueMs,
    mean_itl_ms: tokens > 1 ? timings.generationMs / (tokens - 1) : 0,
    tokens_per_second: total > 0 ? (tokens * 1000) / total : 0,
  };
}
