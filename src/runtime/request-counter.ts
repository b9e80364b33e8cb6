/** @module Requests a Durable Object served, by method: how benchmarks prove which objects sit on the hot path. */
import type { SqlCounts } from "./sql-counter";

/** Requests served since the object started, by RPC method (kept in memory: an evicted object starts again at 0). */
export interface RequestCounts {
  total: number;
  by_method: Record<string, number>;
  since: number;
  /** The SQLite statements and rows of the same span, where the object counts them. */
  sql?: SqlCounts;
}

/** Counts one object's requests. */
export class RequestCounter {
  readonly #byMethod: Record<string, number> = {};
  #total = 0;
  readonly #since = Date.now();

  /** Counts one request to `method`. */
  count(method: string): void {
    this.#total++;
    this.#byMethod[method] = (this.#byMethod[method] ?? 0) + 1;
  }

  /** The counts so far. */
  read(): RequestCounts {
    return { total: this.#total, by_method: { ...this.#byMethod }, since: this.#since };
  }
}
