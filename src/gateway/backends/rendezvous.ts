/**
 * @module Rendezvous (highest-random-weight) hashing: every key ranks every replica, and a key
 * keeps its ranking when other replicas come or go, so a rollout stays where its prefix is cached.
 */
import { fnv1a32, mix32 } from "../../fnv1a";

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
