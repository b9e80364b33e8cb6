/**
 * @module One simulated replica's shared state: its prefix cache, the requests it is running, and
 * its prefill queue. It turns a request's prompt into the latency the request is served with:
 * time to first token grows with the uncached prompt tokens (and waits for earlier prefills, as a
 * GPU computes one batch of prefill tokens at a time), decoding slows with the requests running.
 */
import type { LatencyOptions, SimulatorConfig } from "./options";
import { PrefixCache } from "./prefix-cache";

/** Counters in vLLM's terms (`/metrics`): tokens queried and hit, blocks evicted, requests running. */
export interface ReplicaCounters {
  prefixCacheQueries: number;
  prefixCacheHits: number;
  evictedBlocks: number;
  cachedBlocks: number;
  running: number;
}

/** One request being served: its latency, what the cache held, and how to end it. */
export interface ServedRequest {
  latency: LatencyOptions;
  hitTokens: number;
  /** Ends the request; `ids` (prompt + generated) are cached as vLLM keeps a finished sequence's blocks. */
  end(ids?: readonly number[]): void;
}

/** The replica behind one simulator. */
export class ReplicaEngine {
  readonly #cache: PrefixCache;
  readonly #now: () => number;
  #running = 0;
  #prefillFreeAt = 0;
  #queries = 0;
  #hits = 0;

  constructor(config: SimulatorConfig, now: () => number = () => performance.now()) {
    this.#cache = new PrefixCache(config.prefixCache);
    this.#now = now;
  }

  /** Admits a request with `config` as it was when the request arrived. */
  begin(
    config: SimulatorConfig,
    promptIds: readonly number[],
    salt?: string | null,
  ): ServedRequest {
    const options = config.prefixCache;
    this.#cache.reshape(options);
    const lookup = this.#cache.admit(promptIds, salt);
    this.#queries += promptIds.length;
    this.#hits += lookup.hitTokens;
    this.#running++;
    const now = this.#now();
    const start = Math.max(now, this.#prefillFreeAt);
    this.#prefillFreeAt = start + (lookup.missTokens * options.prefillMsPer1kTokens) / 1000;
    const latency = {
      ttftMs: config.latency.ttftMs + (this.#prefillFreeAt - now),
      perTokenMs: config.latency.perTokenMs * (1 + options.decodeSlowdown * (this.#running - 1)),
    };
    let ended = false;
    return {
      latency,
      hitTokens: lookup.hitTokens,
      end: (ids) => {
        if (ended) return;
        ended = true;
        this.#running--;
        if (ids && ids.length > promptIds.length) this.#cache.store(ids, salt);
      },
    };
  }

  /** A snapshot of the counters. */
  counters(): ReplicaCounters {
    return {
      prefixCacheQueries: this.#queries,
      prefixCacheHits: this.#hits,
      evictedBlocks: this.#cache.evicted,
      cachedBlocks: this.#cache.size,
      running: this.#running,
    };
  }
}

/**
 * The counters as Prometheus text under vLLM V1's metric names, so a scraper written for vLLM
 * (`vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total`) reads the simulator too.
 */
export function metricsText(counters: ReplicaCounters, model: string): string {
  const labels = `{engine="0",model_name="${model}"}`;
  const metric = (name: string, type: string, help: string, value: number) =>
    `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}${labels} ${value.toFixed(1)}\n`;
  return [
    metric(
      "vllm:num_requests_running",
      "gauge",
      "Number of requests in model execution batches.",
      counters.running,
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
