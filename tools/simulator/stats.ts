/** @module Request and fault counters, readable in-process (`stats()`) or over HTTP (`GET /sim/stats`). */
import { z } from "zod";

/** Kinds of injected fault. */
export const FaultKind = z.enum(["5xx", "429", "timeout", "malformed"]);
export type FaultKind = z.infer<typeof FaultKind>;

/** A snapshot of the simulator's counters. */
export const SimulatorStats = z.object({
  /** Every request received, including unknown routes. */
  requests: z.int(),
  /** Requests per `"METHOD /path"`; unknown routes count under `"other"`. */
  byEndpoint: z.record(z.string(), z.int()),
  /** Faults injected, by kind. */
  faults: z.record(FaultKind, z.int()),
  /** Generation requests answered (chat and completions, fault-free). */
  completions: z.int(),
  /** Prompt tokens over answered generation requests. */
  promptTokens: z.int(),
  /** Completion tokens over answered generation requests. */
  completionTokens: z.int(),
  /**
   * Prefill/decode handshakes: prefill legs answered, decode legs that pulled a prefill's blocks,
   * decode requests that computed the prefill themselves (no usable handle), requests refused by a role check.
   */
  pd: z.object({ prefill: z.int(), decode: z.int(), recomputed: z.int(), rejected: z.int() }),
  /**
   * The replica's engine (engine/engine-loop.ts): prompt tokens looked up and found cached (vLLM's
   * `prefix_cache_queries` / `prefix_cache_hits`), blocks evicted and cached, requests running and
   * waiting, KV blocks held by running requests and the capacity, preemptions, prompt tokens
   * prefilled (recomputes included) and tokens generated, steps run and the modelled engine time.
   */
  replica: z
    .object({
      prefixCacheQueries: z.int(),
      prefixCacheHits: z.int(),
      evictedBlocks: z.int(),
      cachedBlocks: z.int(),
      running: z.int(),
      waiting: z.int(),
      kvUsedBlocks: z.int(),
      kvCapacityBlocks: z.int(),
      preemptions: z.int(),
      promptTokens: z.int(),
      generationTokens: z.int(),
      steps: z.int(),
      engineMs: z.number(),
    })
    .optional(),
});
export type SimulatorStats = z.infer<typeof SimulatorStats>;

/** One prefill/decode handshake event. */
export type PdEvent = "prefill" | "decode" | "recomputed" | "rejected";

/** Mutable counters behind `SimulatorStats`. */
export interface StatsRecorder {
  request(endpoint: string): void;
  fault(kind: FaultKind): void;
  completion(promptTokens: number, completionTokens: number): void;
  pd(event: PdEvent): void;
  snapshot(): SimulatorStats;
}

/** A fresh set of zeroed counters. */
export function createStatsRecorder(): StatsRecorder {
  const stats: SimulatorStats = {
    requests: 0,
    byEndpoint: {},
    faults: { "5xx": 0, "429": 0, timeout: 0, malformed: 0 },
    completions: 0,
    promptTokens: 0,
    completionTokens: 0,
    pd: { prefill: 0, decode: 0, recomputed: 0, rejected: 0 },
  };
  return {
    request(endpoint) {
      stats.requests++;
      stats.byEndpoint[endpoint] = (stats.byEndpoint[endpoint] ?? 0) + 1;
    },
    fault(kind) {
      stats.faults[kind]++;
    },
    completion(promptTokens, completionTokens) {
      stats.completions++;
      stats.promptTokens += promptTokens;
      stats.completionTokens += completionTokens;
    },
    pd(event) {
      stats.pd[event]++;
    },
    snapshot: () => structuredClone(stats),
  };
}
