/**
 * @module 32-bit FNV-1a over a string's UTF-16 code units: the one hash behind shard picking
 * (admission shards, claim shards) and replica ranking (rendezvous). Stable across isolates,
 * processes and restarts, which is what a shard's name must be: changing it would move every
 * rollout's admission and every offer to another object.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** 32-bit FNV-1a of `text`, starting from `seed` (a previous hash, or the FNV offset basis). */
export function fnv1a32(text: string, seed = FNV_OFFSET): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME) >>> 0;
  }
  return h >>> 0;
}
