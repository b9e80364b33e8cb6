/**
 * @module One replica's engine: a step loop like vLLM V1's scheduler. Each step schedules the
 * running sequences first (one decode token each, or the next chunk of a prefill), preempting the
 * newest running sequence when the KV cache cannot hold a step's new blocks (its blocks are freed
 * and its prefill recomputed later: vLLM V1's recompute preemption), then admits waiting
 * sequences in arrival order while the step's token budget, `maxNumSeqs` and the free blocks
 * allow (none in a step that preempted). The step takes the time the cost model gives for what it
 * computed; then every sequence whose context is computed samples one token from the token
 * source (one batched call), and each token goes out as that step produces it.
 */
import { setImmediate as nextTurn, setTimeout as sleep } from "node:timers/promises";
import type { TokenChoice } from "../logprobs";
import type { EngineConfig, SimulatorConfig } from "../options";
import { PrefixCache, blockHashes } from "../prefix-cache";
import { type StepCost, curveCost, latencyCost } from "./cost-model";
import {
  type EngineCounters,
  type EngineRequest,
  type EngineRequestSpec,
  Sequence,
} from "./engine-request";
import { KvBlocks } from "./kv-blocks";
import type { TokenEvent } from "./sequence";
import type { SequenceView, TokenSource } from "./token-source";

export type {
  EngineCounters,
  EngineRequest,
  EngineRequestSpec,
  RequestTimings,
} from "./engine-request";

/** One step's work for one sequence. */
interface Scheduled {
  seq: Sequence;
  tokens: number;
}

/** The step loop of one replica. */
export class EngineLoop {
  readonly #config: () => SimulatorConfig;
  readonly #source: () => TokenSource;
  readonly #cache: PrefixCache;
  readonly #blocks: KvBlocks;
  readonly #waiting: Sequence[] = [];
  readonly #running: Sequence[] = [];
  #nextId = 0;
  #looping = false;
  /** Set while a weight load holds the loop between two steps. */
  #hold: { released: Promise<void>; release: () => void } | null = null;
  /** The step running now, if any. */
  #stepping: Promise<void> | null = null;
  #clock = 0;
  #due = 0;
  #counters = { queries: 0, hits: 0, preemptions: 0, prompt: 0, generation: 0, steps: 0 };

  constructor(config: () => SimulatorConfig, source: () => TokenSource) {
    this.#config = config;
    this.#source = source;
    const { prefixCache } = config();
    this.#cache = new PrefixCache(prefixCache);
    this.#blocks = new KvBlocks(prefixCache.capacityBlocks, prefixCache.blockSize);
  }

  /** Queues a generation; it starts at the next step. */
  add(spec: EngineRequestSpec): EngineRequest {
    const { blockSize } = this.#config().prefixCache;
    const keys = blockHashes(spec.promptIds, blockSize, spec.salt);
    const seq = new Sequence(this.#nextId++, spec, keys, this.#clock, (s) => this.#abort(s));
    this.#waiting.push(seq);
    this.#kick();
    return seq;
  }

  /** A snapshot of the counters. */
  counters(): EngineCounters {
    const c = this.#counters;
    return {
      prefixCacheQueries: c.queries,
      prefixCacheHits: c.hits,
      evictedBlocks: this.#cache.evicted,
      cachedBlocks: this.#cache.size,
      running: this.#running.length,
      waiting: this.#waiting.length,
      kvUsedBlocks: this.#blocks.used,
      kvCapacityBlocks: this.#blocks.capacity,
      preemptions: c.preemptions,
      promptTokens: c.prompt,
      generationTokens: c.generation,
      steps: c.steps,
      engineMs: this.#clock,
    };
  }

  /**
   * Runs `work` between two steps: the step under way ends first and no step starts until `work`
   * settles (a weight load lands whole, as SGLang's update_weights_from_disk pauses generation).
   * Answers `work`'s result and the sequences that were running, which go on afterwards.
   */
  async betweenSteps<T>(work: () => Promise<T>): Promise<{ result: T; paused: number }> {
    while (this.#hold) await this.#hold.released;
    let release = () => {};
    this.#hold = { released: new Promise<void>((resolve) => (release = resolve)), release };
    try {
      if (this.#stepping !== null) await this.#stepping;
      return { result: await work(), paused: this.#running.length + this.#waiting.length };
    } finally {
      this.#hold = null;
      release();
    }
  }

  /** Ends every sequence (the server is closing). */
  close(): void {
    for (const seq of [...this.#running, ...this.#waiting]) this.#abort(seq);
  }

  #kick(): void {
    if (this.#looping) return;
    this.#looping = true;
    // Started on the next turn, so requests that arrive together share the first step.
    setImmediate(() => {
      this.#due = performance.now();
      void this.#run();
    });
  }

  async #run(): Promise<void> {
    try {
      while (this.#waiting.length + this.#running.length > 0) {
        if (this.#hold) await this.#hold.released;
        this.#stepping = this.#step();
        await this.#stepping;
        this.#stepping = null;
      }
    } finally {
      this.#looping = false;
      if (this.#waiting.length + this.#running.length > 0) this.#kick();
    }
  }

  async #step(): Promise<void> {
    const config = this.#config();
    this.#reshape(config);
    const scheduled = this.#schedule(config.engine);
    const sampling = scheduled.filter(
      ({ seq, tokens }) => seq.computed + tokens >= seq.contextLength,
    );
    let prefillTokens = 0;
    let contextTokens = 0;
    for (const { seq, tokens } of scheduled) {
      seq.computed += tokens;
      // A decode computes its one new token; anything more (or a first token) is prefill or recompute.
      if (tokens > 1 || seq.output.ids.length === 0) prefillTokens += tokens;
    }
    for (const { seq } of sampling) contextTokens += seq.contextLength;
    const ms = this.#cost(config)({
      prefillTokens,
      decodeSequences: sampling.length,
      contextTokens,
    });
    this.#counters.steps++;
    this.#counters.prompt += prefillTokens;
    this.#clock += ms;
    await this.#pace(ms * config.engine.timeScale);
    const live = sampling.filter(({ seq }) => seq.state === "running").map(({ seq }) => seq);
    if (live.length > 0) await this.#sample(live);
    if (scheduled.length === 0 && this.#running.length === 0) this.#refuseHead();
  }

  /** The running sequences' work, then admissions; preempts when a running one cannot grow. */
  #schedule(engine: EngineConfig): Scheduled[] {
    let budget = engine.maxNumBatchedTokens;
    const scheduled: Scheduled[] = [];
    let preempted = false;
    for (let i = 0; i < this.#running.length && budget > 0; i++) {
      const seq = this.#running[i]!;
      const tokens = Math.min(seq.contextLength - seq.computed, budget);
      if (tokens <= 0) continue;
      let fits = this.#blocks.fits(seq.holding, seq.computed + tokens);
      while (!fits) {
        const victim = this.#running.at(-1)!;
        this.#preempt(victim);
        preempted = true;
        const at = scheduled.findIndex((s) => s.seq === victim);
        if (at >= 0) budget += scheduled.splice(at, 1)[0]!.tokens;
        if (victim === seq) break;
        fits = this.#blocks.fits(seq.holding, seq.computed + tokens);
      }
      if (!fits) break;
      this.#blocks.grow(seq.holding, seq.computed + tokens);
      scheduled.push({ seq, tokens });
      budget -= tokens;
    }
    if (preempted) return scheduled;
    while (this.#waiting.length > 0 && this.#running.length < engine.maxNumSeqs && budget > 0) {
      const seq = this.#waiting[0]!;
      const context = seq.contextLength;
      const keys = seq.recomputeKeys ?? seq.holding.promptKeys;
      const hit = this.#cache.peekHashed(keys, context);
      const tokens = Math.min(context - hit, budget);
      if (!engine.chunkedPrefill && tokens < context - hit) break;
      if (!this.#blocks.fits(seq.holding, hit + tokens)) break;
      this.#waiting.shift();
      this.#cache.admitHashed(keys, context);
      this.#counters.queries += context;
      this.#counters.hits += hit;
      if (!seq.admitted) seq.hitTokens = hit;
      seq.admitted = true;
      seq.startedAt ??= this.#clock;
      seq.computed = hit;
      seq.state = "running";
      this.#running.push(seq);
      this.#blocks.grow(seq.holding, hit + tokens);
      scheduled.push({ seq, tokens });
      budget -= tokens;
    }
    return scheduled;
  }

  async #sample(live: Sequence[]): Promise<void> {
    const views: SequenceView[] = live.map((seq) => ({
      seqId: seq.id,
      key: seq.spec.key,
      promptIds: seq.spec.promptIds,
      outputIds: seq.output.ids,
      params: seq.spec.params,
      script: seq.spec.script,
      tokenizer: seq.spec.tokenizer,
    }));
    let draws: TokenChoice[][];
    try {
      const answer = this.#source().next(views);
      draws = answer instanceof Promise ? await answer : answer;
      if (draws.length !== live.length)
        throw new Error(
          `token source answered ${draws.length} tokens for ${live.length} sequences`,
        );
    } catch (error) {
      for (const seq of live) {
        seq.error = error instanceof Error ? error : new Error(String(error));
        this.#abort(seq);
      }
      return;
    }
    live.forEach((seq, i) => {
      if (seq.state !== "running") return; // aborted while the source answered
      const choices = draws[i]!;
      let event: TokenEvent;
      try {
        event = seq.output.append(choices[0]!.id, choices);
      } catch (error) {
        // A token the wire layer cannot decode fails its sequence, never the loop.
        seq.error = error instanceof Error ? error : new Error(String(error));
        this.#abort(seq);
        return;
      }
      this.#counters.generation++;
      seq.firstTokenAt ??= this.#clock;
      seq.spec.onToken?.(event);
      if (event.finished) this.#finish(seq);
    });
  }

  #preempt(seq: Sequence): void {
    this.#blocks.free(seq.holding);
    this.#running.splice(this.#running.indexOf(seq), 1);
    seq.computed = 0;
    seq.state = "waiting";
    // Hashed once here: the context it must recompute does not change while it waits.
    const context = [...seq.spec.promptIds, ...seq.output.ids];
    seq.recomputeKeys = blockHashes(context, this.#config().prefixCache.blockSize, seq.spec.salt);
    seq.preemptions++;
    this.#counters.preemptions++;
    this.#source().release?.(seq.id);
    this.#waiting.unshift(seq);
  }

  #finish(seq: Sequence): void {
    if (seq.state === "running") {
      this.#blocks.free(seq.holding);
      this.#running.splice(this.#running.indexOf(seq), 1);
    } else if (seq.state === "waiting") {
      const at = this.#waiting.indexOf(seq);
      if (at >= 0) this.#waiting.splice(at, 1);
    }
    if (seq.state === "done") return;
    seq.state = "done";
    seq.finishedAt = this.#clock;
    // vLLM keeps a finished sequence's full blocks cached for the next turn.
    if (seq.output.ids.length > 0)
      this.#cache.store([...seq.spec.promptIds, ...seq.output.ids], seq.spec.salt);
    this.#source().release?.(seq.id);
    seq.resolve();
  }

  #abort(seq: Sequence): void {
    if (seq.state === "done") return;
    seq.output.abort();
    this.#finish(seq);
  }

  /** A waiting sequence that cannot fit an empty cache can never run: it fails instead of waiting forever. */
  #refuseHead(): void {
    const head = this.#waiting[0];
    if (!head) return;
    head.error = new Error(
      `the prompt needs more KV blocks than the replica holds (${this.#blocks.capacity})`,
    );
    this.#abort(head);
  }

  #reshape(config: SimulatorConfig): void {
    const { prefixCache } = config;
    this.#blocks.reshape(prefixCache.capacityBlocks, prefixCache.blockSize);
    // Blocks the running sequences own cannot hold cached prefixes meanwhile.
    this.#cache.reshape({
      blockSize: prefixCache.blockSize,
      capacityBlocks: Math.max(0, prefixCache.capacityBlocks - this.#blocks.own),
    });
  }

  #cost(config: SimulatorConfig): StepCost {
    const curve = config.engine.costModel;
    return curve ? curveCost(curve) : latencyCost(config.latency, config.prefixCache);
  }

  /**
   * Waits until the step's modelled time has passed on the wall clock. Short steps accumulate
   * against a due time (timers are ~1 ms coarse), so the average pace stays right; a step of no
   * time still yields, so requests arrive and streams flush between steps.
   */
  async #pace(ms: number): Promise<void> {
    const now = performance.now();
    this.#due = Math.max(this.#due, now - 50) + ms;
    const wait = this.#due - now;
    if (wait >= 1) await sleep(wait);
    else await nextTurn();
  }
}
