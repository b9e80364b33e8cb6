/**
 * @module 32-bit FNV-1a: the one implementation. `fnv1a32` hashes a string's UTF-16 code units and
 * is behind shard picking (admission shards, claim shards) and replica ranking (rendezvous);
 * `fnv1aStep` is its single step, for hashes that feed other units (the simulator's seeds hash
 * bytes). Stable across isolates, processes and restarts, which is what a shard's name must be:
 * changing it would move every rollout's admission and every offer to another object.
 */

/** FNV-1a's 32-bit offset basis: the hash of nothing, where every hash starts. */
export const FNV1A_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** One FNV-1a step: `hash` with `unit` (a byte, or a UTF-16 code unit) folded in. */
export function fnv1aStep(hash: number, unit: number): number {
  return Math.imul(hash ^ unit, FNV_PRIME) >>> 0;
}

/** 32-bit FNV-1a of `text`, starting from `seed` (a previous hash, or the FNV offset basis). */
export function fnv1a32(text: string, seed = FNV1A_OFFSET_BASIS): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) h = fnv1aStep(h, text.charCodeAt(i));
  return h;
}

/**
 * MurmurHash3's 32-bit finalizer: every input bit flips each output bit with probability ~1/2.
 * FNV-1a alone leaves neighbouring keys ("r-1", "r-2", "conv-1") with close high bits, which
 * biases a max-of-scores choice and a split that reads the hash as a fraction; mix before either.
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
