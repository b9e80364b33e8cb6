/**
 * @module The engine's counters as Prometheus text under vLLM V1's metric names
 * (vllm/v1/metrics/loggers.py, PrometheusStatLogger), so a scraper written for vLLM reads the
 * simulator too: `vllm:kv_cache_usage_perc` (a fraction, 1 = full), the running and waiting
 * requests, preemptions, prompt and generation tokens, and the prefix cache's queries and hits.
 */
import type { EngineCounters } from "./engine-loop";

/** The counters as the text `GET /metrics` answers. */
export function metricsText(counters: EngineCounters, model: string): string {
  const labels = `{engine="0",model_name="${model}"}`;
  const metric = (name: string, type: string, help: string, value: number) =>
    `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}${labels} ${type === "gauge" && !Number.isInteger(value) ? value : value.toFixed(1)}\n`;
  const usage =
    counters.kvCapacityBlocks > 0 ? counters.kvUsedBlocks / counters.kvCapacityBlocks : 0;
  return [
    metric(
      "vllm:num_requests_running",
      "gauge",
      "Number of requests in model execution batches.",
      counters.running,
    ),
    metric(
      "vllm:num_requests_waiting",
      "gauge",
      "Number of requests waiting to be processed.",
      counters.waiting,
    ),
    metric(
      "vllm:kv_cache_usage_perc",
      "gauge",
      "KV-cache usage. 1 means 100 percent usage.",
      usage,
    ),
    metric(
      "vllm:num_preemptions_total",
      "counter",
      "Cumulative number of preemption from the engine.",
      counters.preemptions,
    ),
    metric(
      "vllm:prompt_tokens_total",
      "counter",
      "Number of prefill tokens processed.",
      counters.promptTokens,
    ),
    metric(
      "vllm:generation_tokens_total",
      "counter",
      "Number of generation tokens processed.",
      counters.generationTokens,
    ),
    metric(
      "vllm:prefix_cache_queries_total",
      "counter",
      "Prefix cache queries, in terms of number of queried tokens.",
      counters.prefixCacheQueries,
    ),
    metric(
      "vllm:prefix_cache_hits_total",
      "counter",
      "Prefix cache hits, in terms of number of cached tokens.",
      counters.prefixCacheHits,
    ),
  ].join("");
}
