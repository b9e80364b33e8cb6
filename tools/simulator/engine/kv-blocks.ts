/**
 * @module The KV blocks that running sequences hold, against the replica's capacity. As in vLLM's
 * block pool, a full prompt block is named by its chained hash (prefix-cache.ts) and shared by
 * every running sequence whose prompt starts with the same tokens, so it is counted once; the
 * partial last block and the blocks of generated tokens are each sequence's own. Usage is blocks
 * held by running sequences over the capacity (vLLM's `kv_cache_usage_perc`); free cached blocks
 * (the prefix cache's LRU) do not count, they are reused as needed.
 */

/** What one sequence holds. */
export interface BlockHolding {
  /** Hashes of the sequence's full prompt blocks, in order (shared with identical prefixes). */
  readonly promptKeys: readonly number[];
  /** Blocks held so far (shared and own). */
  blocks: number;
}

/** The running sequences' blocks. */
export class KvBlocks {
  readonly #shared = new Map<number, number>();
  #own = 0;
  #capacity: number;
  #blockSize: number;

  constructor(capacity: number, blockSize: number) {
    this.#capacity = capacity;
    this.#blockSize = blockSize;
  }

  /** Adopts new geometry (held blocks stay held: a smaller capacity preempts on the next step). */
  reshape(capacity: number, blockSize: number): void {
    this.#capacity = capacity;
    this.#blockSize = blockSize;
  }

  /** Blocks held by running sequences. */
  get used(): number {
    return this.#shared.size + this.#own;
  }

  /** Blocks the sequences own (not shared through the prefix): what the prefix cache cannot reuse. */
  get own(): number {
    return this.#own;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** New blocks `holding` needs to hold `tokens` tokens' KV. */
  needed(holding: BlockHolding, tokens: number): number {
    const want = Math.ceil(tokens / this.#blockSize);
    let fresh = 0;
    for (let i = holding.blocks; i < want; i++) {
      const key = holding.promptKeys[i];
      if (key === undefined || !this.#shared.has(key)) fresh++;
    }
    return fresh;
  }

  /** Whether `holding` can grow to `tokens` tokens now. */
  fits(holding: BlockHolding, tokens: number): boolean {
    return this.used + this.needed(holding, tokens) <= this.#capacity;
  }

  /** Grows `holding` to `tokens` tokens (the caller checked `fits`). */
  grow(holding: BlockHolding, tokens: number): void {
    const want = Math.ceil(tokens / this.#blockSize);
    for (let i = holding.blocks; i < want; i++) {
      const key = holding.promptKeys[i];
      if (key === undefined) this.#own++;
      else this.#shared.set(key, (this.#shared.get(key) ?? 0) + 1);
    }
    holding.blocks = Math.max(holding.blocks, want);
  }

  /** Frees every block of `holding` (a finished or preempted sequence). */
  free(holding: BlockHolding): void {
    for (let i = 0; i < holding.blocks; i++) {
      const key = holding.promptKeys[i];
      if (key === undefined) {
        this.#own--;
        continue;
      }
      const count = (this.#shared.get(key) ?? 1) - 1;
      if (count <= 0) this.#shared.delete(key);
      else this.#shared.set(key, count);
    }
    holding.blocks = 0;
  }
}
