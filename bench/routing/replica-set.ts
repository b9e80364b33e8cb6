/** @module The simulated vLLM replicas one `bench:routing` run routes over: fresh processes per run, read back when it ends. */
import type { PrefixCacheOptions } from "../../tools/simulator/options";
import { startSimulatorProcess } from "../kit/simulator-process";

/** The replicas of a workload: `count` alike, except the last `slowFactor` times slower (1: all equal). */
export interface ReplicaSpec {
  count: number;
  slowFactor: number;
  /** Decode time per token with one request running. */
  perTokenMs: number;
  cache: Required<PrefixCacheOptions>;
}

/** What the replicas' own counters said at the end of a run. */
export interface ReplicaCounters {
  /** Prefix-cache blocks looked up and found, all replicas together. */
  queries: number;
  hits: number;
  /** Sequences the engines preempted (KV cache full). */
  preemptions: number;
  /** Chat calls each replica answered, in replica order (the last is the slow one when there is one). */
  chatCalls: number[];
}

interface SimStats {
  byEndpoint: Record<string, number>;
  replica: { prefixCacheQueries: number; prefixCacheHits: number; preemptions: number };
}

/** Starts the replicas of `spec`, runs `fn` with their URLs, reads their counters, stops them. */
export async function withReplicas<T>(
  spec: ReplicaSpec,
  fn: (urls: string[]) => Promise<T>,
): Promise<{ value: T; counters: ReplicaCounters }> {
  const replicas = await Promise.all(
    Array.from({ length: spec.count }, (_, i) => {
      const factor = i === spec.count - 1 ? spec.slowFactor : 1;
      return startSimulatorProcess({
        seed: i + 1,
        // The toy tokenizer is the one `documentOf` measures prompts with, so the token counts the
        // bench prints are the replicas' own; it is ready at once, where Qwen3's takes 3-7 s per
        // process on a loaded 2-core machine (every run starts fresh replicas).
        tokenizer: "toy",
        perRequestMetrics: true,
        latency: { ttftMs: 0, perTokenMs: spec.perTokenMs * factor },
        prefixCache: {
          ...spec.cache,
          prefillMsPer1kTokens: spec.cache.prefillMsPer1kTokens * factor,
        },
      });
    }),
  );
  try {
    const value = await fn(replicas.map((replica) => replica.url));
    const stats = await Promise.all(
      replicas.map(
        async (replica) => (await (await fetch(`${replica.url}/sim/stats`)).json()) as SimStats,
      ),
    );
    return {
      value,
      counters: {
        queries: stats.reduce((sum, s) => sum + s.replica.prefixCacheQueries, 0),
        hits: stats.reduce((sum, s) => sum + s.replica.prefixCacheHits, 0),
        preemptions: stats.reduce((sum, s) => sum + s.replica.preemptions, 0),
        chatCalls: stats.map((s) => s.byEndpoint["POST /v1/chat/completions"] ?? 0),
      },
    };
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop()));
  }
}
