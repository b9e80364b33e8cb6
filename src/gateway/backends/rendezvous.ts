/**
 * @module Rendezvous (highest-random-weight) hashing: every key ranks every replica, and a key
 * keeps its ranking when other replicas come or go, so a rollout stays where its prefix is cached.
 */
import { fnv1a32 } from "../../fnv1a";

/**
 * murmur3's 32-bit finaliser. FNV-1a alone leaves neighbouring keys ("r-1", "r-2") with close
 * high bits, which biases a max-of-scores choice; the finaliser spreads every input bit.
 */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** The weight of `replica` for `key`: deterministic across isolates, processes and restarts. */
export function rendezvousScore(key: string, replica: string): number {
  return mix32(fnv1a32(key, fnv1a32(replica)));
}

/**
 * `replicas` ordered best-first for `key` (highest score first; ties, which need a 32-bit
 * collision, fall back to URL order so the ranking stays total).
 */
export function rendezvousOrder<T extends { readonly url: string }>(
  key: string,
  replicas: readonly T[],
): T[] {
  return replicas
    .map((replica) => ({ replica, score: rendezvousScore(key, replica.url) }))
    .sort((a, b) => b.score - a.score || (a.replica.url < b.replica.url ? -1 : 1))
    .map((entry) => entry.replica);
}
