/** @module Seeded pseudo-randomness, so a fixed seed replays a simulated rollout exactly. */
import { FNV1A_OFFSET_BASIS, fnv1aStep } from "../../src/fnv1a";

/** A source of uniform numbers in [0, 1). */
export interface Rng {
  /** Next uniform number in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
}

/**
 * 32-bit FNV-1a (src/fnv1a.ts's step) over the bytes of the string forms of `parts` (each UTF-16
 * code unit as two bytes, low first), joined with a separator that cannot occur in a number, so
 * `("1", "23")` and `("12", "3")` hash differently. Bytes, not code units as `fnv1a32` hashes:
 * every seed the simulator ever used was computed this way, and a seed must replay exactly.
 */
export function hashParts(...parts: ReadonlyArray<string | number | readonly number[]>): number {
  let h = FNV1A_OFFSET_BASIS;
  const mix = (code: number): void => {
    h = fnv1aStep(h, code & 0xff);
    h = fnv1aStep(h, (code >>> 8) & 0xff);
  };
  for (const part of parts) {
    if (typeof part === "string") {
      for (let i = 0; i < part.length; i++) mix(part.charCodeAt(i));
    } else if (typeof part === "number") {
      const text = String(part);
      for (let i = 0; i < text.length; i++) mix(text.charCodeAt(i));
    } else {
      for (const n of part) {
        mix(n & 0xffff);
        mix(n >>> 16);
      }
    }
    mix(0xfffe);
  }
  return h >>> 0;
}

/** mulberry32: tiny, fast, and good enough for scripting a fake model's choices. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick<T>(items: readonly T[]): T {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error("pick needs a non-empty list");
      return item;
    },
  };
}
