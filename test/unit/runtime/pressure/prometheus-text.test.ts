/** Unit: reading vLLM's KV-pressure metrics out of Prometheus text. */
import { describe, expect, it } from "vitest";
import { metricsUrlOf, parsePressure } from "../../../../src/runtime/pressure";
import { metricsText } from "../../../../tools/simulator/engine/metrics-text";
import type { EngineCounters } from "../../../../tools/simulator/engine/engine-loop";

const counters: EngineCounters = {
  prefixCacheQueries: 0,
  prefixCacheHits: 0,
  evictedBlocks: 0,
  cachedBlocks: 0,
  running: 12,
  waiting: 3,
  kvUsedBlocks: 450,
  kvCapacityBlocks: 500,
  preemptions: 7,
  promptTokens: 0,
  generationTokens: 0,
  steps: 0,
  engineMs: 0,
};

describe("parsePressure (unit)", () => {
  it("reads usage, running, waiting and preemptions from the simulator's /metrics text", () => {
    expect(parsePressure("u", metricsText(counters, "sim"))).toEqual({
      url: "u",
      kv_usage: 0.9,
      running: 12,
      waiting: 3,
      preemptions: 7,
    });
  });

  it("takes the fullest engine's usage and sums the other metrics over engines", () => {
    const text = [
      "# TYPE vllm:kv_cache_usage_perc gauge",
      'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25',
      'vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.95 1712345678000',
      'vllm:num_requests_waiting{engine="0"} 2',
      'vllm:num_requests_waiting{engine="1"} 5',
      'vllm:num_preemptions_total{engine="0"} 1.0',
      'vllm:num_preemptions_total{engine="1"} 4.0',
      'vllm:num_requests_running{engine="1"} 9',
    ].join("\n");
    expect(parsePressure("u", text)).toMatchObject({
      kv_usage: 0.95,
      waiting: 7,
      preemptions: 5,
      running: 9,
    });
  });

  it("reads the pre-v0.10 name vllm:gpu_cache_usage_perc", () => {
    expect(parsePressure("u", 'vllm:gpu_cache_usage_perc{model_name="m"} 0.5\n')?.kv_usage).toBe(
      0.5,
    );
  });

  it("answers null for text without a KV usage metric, so no data never reads as no pressure", () => {
    expect(parsePressure("u", 'vllm:num_requests_running{engine="0"} 3\n')).toBeNull();
    expect(parsePressure("u", "<html>not metrics</html>")).toBeNull();
  });
});

describe("metricsUrlOf (unit)", () => {
  it("puts /metrics at the server root, with or without /v1", () => {
    expect(metricsUrlOf("http://h:8000/v1")).toBe("http://h:8000/metrics");
    expect(metricsUrlOf("http://h:8000/v1/")).toBe("http://h:8000/metrics");
    expect(metricsUrlOf("http://h:8000")).toBe("http://h:8000/metrics");
  });
});
