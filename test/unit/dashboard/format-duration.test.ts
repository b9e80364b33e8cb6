import { describe, expect, it } from "vitest";
import { duration } from "../../../functions/dashboard/components/format";

describe("duration (unit)", () => {
  it("writes each range in its unit", () => {
    expect(duration(850)).toBe("850 ms");
    expect(duration(12_340)).toBe("12.3 s");
    expect(duration(245_000)).toBe("4 min 05 s");
    expect([duration(null), duration(undefined), duration(Number.NaN)]).toEqual(["–", "–", "–"]);
  });

  it("never writes a unit's upper bound: a value just under it rounds into the next unit", () => {
    expect(duration(999.6)).toBe("1.0 s");
    expect(duration(59_960)).toBe("1 min 00 s");
    expect(duration(599_600)).toBe("10 min 00 s");
    expect(duration(119_500)).toBe("2 min 00 s");
  });
});
