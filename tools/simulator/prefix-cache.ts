/**
 * @module vLLM's automatic prefix caching, as one replica's LRU of KV-block hashes. Like vLLM
 * (docs.vllm.ai/en/latest/design/prefix_caching), each full block of `blockSize` tokens is named
 * by a hash of its parent block's hash and its own tokens, and the request's `cache_salt` is mixed
 * into the first block's hash, so requests with different salts share no block. Only whole blocks
 * are cached, a hit is the longest run of cached blocks from the start, and at least the last
 * prompt token is always computed (vLLM needs its logits), so a fully cached prompt still
 * prefills its last block.
 */

/** Cache geometry: `--block-size` and `--num-gpu-blocks-override` in vLLM's terms. */
export interface PrefixCacheGeometry {
  /** Tokens per KV block. */
  blockSize: number;
  /** Blocks the replica can hold; the least recently used is evicted beyond it. */
  capacityBlocks: number;
}

/** What one lookup found. */
export interface PrefixLookup {
  /** Prompt tokens whose KV was already cached (a multiple of the block size). */
  hitTokens: number;
  /** Prompt tokens that must be prefilled. */
  missTokens: number;
}

const SEED_HI = 0x9e3779b9;
const SEED_LO = 0x85ebca6b;

function mix(h: number, value: number): number {
  h ^= value;
  h = Math.imul(h, 0x01000193);
  h ^= h >>> 15;
  return h >>> 0;
}

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** 53 bits from two 32-bit hashes: collisions are negligible for the blocks one replica holds. */
function blockKey(hi: number, lo: number): number {
  return (hi & 0x1fffff) * 0x100000000 + lo;
}

/** The salt as the first block's parent hash pair (an unsalted request has the fixed seed pair). */
function saltSeed(salt: string | null | undefined): [number, number] {
  let hi = SEED_HI;
  let lo = SEED_LO;
  if (salt) {
    for (let i = 0; i < salt.length; i++) {
      hi = mix(hi, salt.charCodeAt(i));
      lo = mix(lo, salt.charCodeAt(i) ^ 0x5bd1e995);
    }
  }
  return [finish(hi), finish(lo)];
}

/** The chained hashes of every full block of `ids`. */
export function blockHashes(
  ids: readonly number[],
  blockSize: number,
  salt?: string | null,
): number[] {
  let [hi, lo] = saltSeed(salt);
  const keys: number[] = [];
  for (let start = 0; start + blockSize <= ids.length; start += blockSize) {
    let h1 = hi;
    let h2 = lo ^ 0x27d4eb2f;
    for (let i = start; i < start + blockSize; i++) {
      const id = ids[i]!;
      h1 = mix(h1, id);
      h2 = mix(h2, id ^ 0x165667b1);
    }
    hi = finish(h1);
    lo = finish(h2);
    keys.push(blockKey(hi, lo));
  }
  return keys;
}

/** One replica's prefix cache. */
export class PrefixCache {
  // Map order is recency order: a touched block is re-inserted at the end, eviction takes the first.
  readonly #blocks = new Map<number, true>();
  #geometry: PrefixCacheGeometry;
  #evicted = 0;

  constructor(geometry: PrefixCacheGeometry) {
    this.#geometry = { ...geometry };
  }

  /** Adopts new geometry; a new block size invalidates every block, as restarting vLLM with it would. */
  reshape(geometry: PrefixCacheGeometry): void {
    if (geometry.blockSize !== this.#geometry.blockSize) this.#blocks.clear();
    this.#geometry = { ...geometry };
    this.#evictBeyondCapacity();
  }

  /**
   * Looks the prompt up, then caches its full blocks (they are computed by this request's prefill)
   * and marks the hits recently used.
   */
  admit(promptIds: readonly number[], salt?: string | null): PrefixLookup {
    return this.admitHashed(
      blockHashes(promptIds, this.#geometry.blockSize, salt),
      promptIds.length,
    );
  }

  /** `admit` for a prompt of `length` tokens whose full blocks hash to `keys` (blockHashes). */
  admitHashed(keys: readonly number[], length: number): PrefixLookup {
    const hitTokens = this.peekHashed(keys, length);
    this.#insert(keys);
    return { hitTokens, missTokens: length - hitTokens };
  }

  /** The tokens a lookup of `keys` (a prompt of `length` tokens) would hit, touching nothing. */
  peekHashed(keys: readonly number[], length: number): number {
    const { blockSize } = this.#geometry;
    const hittable = Math.min(keys.length, Math.floor(Math.max(0, length - 1) / blockSize));
    let hits = 0;
    while (hits < hittable && this.#blocks.has(keys[hits]!)) hits++;
    return hits * blockSize;
  }

  /** Caches the full blocks of a finished sequence (prompt + generated), as vLLM keeps decoded blocks. */
  store(ids: readonly number[], salt?: string | null): void {
    this.#insert(blockHashes(ids, this.#geometry.blockSize, salt));
  }

  /** Blocks held now. */
  get size(): number {
    return this.#blocks.size;
  }

  /** Blocks evicted so far. */
  get evicted(): number {
    return this.#evicted;
  }

  #insert(keys: readonly number[]): void {
    // Tail blocks first, so a prefix's first blocks are the most recent and evicted last (vLLM
    // frees a request's blocks in reverse order for the same reason: a prefix is useless without its head).
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      this.#blocks.delete(key);
      this.#blocks.set(key, true);
    }
    this.#evictBeyondCapacity();
  }

  #evictBeyondCapacity(): void {
    while (this.#blocks.size > this.#geometry.capacityBlocks) {
      const oldest = this.#blocks.keys().next().value as number;
      this.#blocks.delete(oldest);
      this.#evicted++;
    }
  }
}
