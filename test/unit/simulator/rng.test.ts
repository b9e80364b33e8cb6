import { describe, expect, it } from "vitest";
import { createRng, hashParts } from "../../../tools/simulator/rng";

describe("hashParts (unit)", () => {
  it("gives the values it gave before it shared src/fnv1a.ts's step, so every simulator seed replays as before", () => {
    // Computed with the simulator's own FNV-1a loop (before 2026-12-03), on these exact inputs.
    expect(hashParts()).toBe(2166136261);
    expect(hashParts("")).toBe(3508496442);
    expect(hashParts(42, "greedy", [1, 2, 3])).toBe(2674627332);
    expect(hashParts(7, "seed", 9, [151643, 70000, 0])).toBe(1722978683);
    expect(hashParts("é→🙂")).toBe(3049398051);
    expect(hashParts(0xffffffff, "version", 3)).toBe(2158292086);
    expect(hashParts([0x12345678])).toBe(577263098);
  });

  it('keeps parts apart: ("1", "23") and ("12", "3") differ', () => {
    expect(hashParts("1", "23")).toBe(204924281);
    expect(hashParts("12", "3")).toBe(3158294933);
  });

  it("seeds the same random sequence from the same parts", () => {
    const draws = (seed: number) => Array.from({ length: 3 }, createRng(seed).next);
    expect(draws(hashParts(7, "faults"))).toEqual(draws(hashParts(7, "faults")));
    expect(draws(hashParts(7, "faults"))).not.toEqual(draws(hashParts(8, "faults")));
  });
});
