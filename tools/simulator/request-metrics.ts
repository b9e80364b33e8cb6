/**
 * @module Per-request timing `metrics` (vLLM PR #46768): answered only when the server runs with
 * `--enable-per-request-metrics` and the request asks with `include_metrics: true`, and only for
 * one choice (vLLM suppresses them when timing cannot be attributed to one generation stream).
 * The simulator reports the latency it models.
 */
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
  choices: ReadonlyArray<{ generation: { tokenIds: readonly number[] } }>,
): RequestMetrics | null {
  if (!config.perRequestMetrics || request.include_metrics !== true || choices.length !== 1)
    return null;
  const tokens = choices[0]!.generation.tokenIds.length;
  const { ttftMs, perTokenMs } = config.latency;
  const generation = perTokenMs * Math.max(0, tokens - 1);
  const total = ttftMs + generation;
  return {
    time_to_first_token_ms: ttftMs,
    generation_time_ms: generation,
    queue_time_ms: 0,
    mean_itl_ms: perTokenMs,
    tokens_per_second: total > 0 ? (tokens * 1000) / total : 0,
  };
}
