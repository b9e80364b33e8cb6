/**
 * @module A generation as the engine holds it: what the wire layer hands in (`EngineRequestSpec`),
 * what it gets back (`EngineRequest`: the output as it grows, timings, abort), and the engine's
 * own state of the sequence (`Sequence`: computed tokens, KV blocks, when it ran).
 */
import type { BlockHolding } from "./kv-blocks";
import type { SimTokenizer } from "../sim-tokenizer";
import { type SamplingParams, SequenceOutput, type TokenEvent } from "./sequence";
import type { ScriptPlan } from "./token-source";

/** One generation handed to the engine. */
export interface EngineRequestSpec {
  /** The context the model continues (a resumed turn includes what it already wrote). */
  promptIds: readonly number[];
  /** vLLM's `cache_salt`: requests with different salts share no cached block. */
  salt: string | null;
  params: SamplingParams;
  /** Tokens the context window leaves after the prompt. */
  contextLeft: number;
  /** The sample key (`x-sample-key`), or null. */
  key: string | null;
  script: ScriptPlan | null;
  tokenizer: SimTokenizer;
  /** Told of every token as its step produces it. */
  onToken?: (event: TokenEvent) => void;
}

/** Modelled timings of one request, in ms of engine time. */
export interface RequestTimings {
  /** From entering the queue to its first step. */
  queueMs: number;
  /** From entering the queue to its first token. */
  firstTokenMs: number;
  /** From its first token to its last. */
  generationMs: number;
}

/** A generation in the engine. */
export interface EngineRequest {
  readonly output: SequenceOutput;
  /** Resolves when the sequence finished, was aborted, or failed. */
  readonly done: Promise<void>;
  /** The token source's error, when it failed this sequence. */
  readonly error: Error | null;
  /** Prompt tokens found in the prefix cache at its first admission. */
  readonly hitTokens: number;
  /** Times it was preempted. */
  readonly preemptions: number;
  timings(): RequestTimings;
  /** Stops it (the client left); its blocks are freed and cached. */
  abort(): void;
}

/** The engine's counters in vLLM's terms (`/metrics`, `/sim/stats`). */
export interface EngineCounters {
  prefixCacheQueries: number;
  prefixCacheHits: number;
  evictedBlocks: number;
  cachedBlocks: number;
  running: number;
  waiting: number;
  kvUsedBlocks: number;
  kvCapacityBlocks: number;
  preemptions: number;
  promptTokens: number;
  generationTokens: number;
  steps: number;
  /** Modelled engine time so far, in ms. */
  engineMs: number;
}

/** The engine's state of one sequence. */
export class Sequence implements EngineRequest {
  readonly id: number;
  readonly spec: EngineRequestSpec;
  readonly output: SequenceOutput;
  readonly done: Promise<void>;
  readonly holding: BlockHolding;
  error: Error | null = null;
  hitTokens = 0;
  preemptions = 0;
  /** Block hashes of the whole context a preempted sequence recomputes (null: never preempted). */
  recomputeKeys: number[] | null = null;
  /** Tokens of the context whose KV is computed. */
  computed = 0;
  admitted = false;
  state: "waiting" | "running" | "done" = "waiting";
  enteredAt: number;
  startedAt: number | null = null;
  firstTokenAt: number | null = null;
  finishedAt: number | null = null;
  resolve!: () => void;
  readonly #onAbort: (seq: Sequence) => void;

  constructor(
    id: number,
    spec: EngineRequestSpec,
    keys: number[],
    now: number,
    onAbort: (seq: Sequence) => void,
  ) {
    this.id = id;
    this.spec = spec;
    this.output = new SequenceOutput(spec.tokenizer, spec.params, spec.contextLeft);
    this.holding = { promptKeys: keys, blocks: 0 };
    this.enteredAt = now;
    this.#onAbort = onAbort;
    this.done = new Promise((resolve) => (this.resolve = resolve));
  }

  get contextLength(): number {
    return this.spec.promptIds.length + this.output.ids.length;
  }

  timings(): RequestTimings {
    const first = this.firstTokenAt ?? this.finishedAt ?? this.enteredAt;
    return {
      queueMs: (this.startedAt ?? first) - this.enteredAt,
      firstTokenMs: first - this.enteredAt,
      generationMs: (this.finishedAt ?? first) - first,
    };
  }

  abort(): void {
    this.#onAbort(this);
  }
}
