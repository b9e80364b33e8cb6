/** Unit: the pressure config as `PUT /v1/policy/pressure` merges and validates it. */
import { describe, expect, it } from "vitest";
import { DEFAULT_PRESSURE_CONFIG, mergePressure } from "../../../src/schemas/pressure";

describe("mergePressure (unit)", () => {
  it("is off by default and merges a patch over the stored config", () => {
    expect(DEFAULT_PRESSURE_CONFIG).toMatchObject({
      enabled: false,
      high_water: 0.9,
      low_water: 0.7,
      period_ms: 2000,
    });
    const merged = mergePressure(DEFAULT_PRESSURE_CONFIG, { enabled: true, period_ms: 500 });
    expect(merged).toMatchObject({
      ok: true,
      config: { enabled: true, period_ms: 500, high_water: 0.9 },
    });
  });

  it("names the field of each problem, relations between fields included", () => {
    const problems = (patch: unknown) => {
      const merged = mergePressure(DEFAULT_PRESSURE_CONFIG, patch);
      return merged.ok ? [] : merged.errors;
    };
    expect(problems({ high_water: 1.5 })).toEqual([
      { path: "high_water", message: "high_water must be <= 1" },
    ]);
    expect(problems({ low_water: 0.95 })).toEqual([
      { path: "low_water", message: "low_water must be < high_water" },
    ]);
    expect(problems({ min_concurrency: 8, max_concurrency: 4 })[0]?.path).toBe("max_concurrency");
    expect(problems({ metrics_urls: ["ftp://x"] })[0]?.path).toBe("metrics_urls.0");
    expect(problems({ surprise: 1 })[0]?.message).toMatch(/surprise/);
  });
});
