import { describe, expect, it } from "vitest";
import { chartRange, lineChart } from "../../../functions/dashboard/components/charts";

describe("lineChart (unit)", () => {
  it("draws one point inside a natural range: [0, 1] for a reward, from 0 otherwise", async () => {
    expect(chartRange([0.711])).toEqual([0, 1]);
    expect(chartRange([42])).toEqual([0, 42]);
    expect(chartRange([-3])).toEqual([-3, 0]);
    expect(chartRange([0.2, 0.9])).toEqual([0.2, 0.9]);
    const svg = String(
      await lineChart([{ label: "step 1", value: 0.711 }], { yLabel: "reward mean", id: "c" }),
    );
    expect(svg).toContain('id="c"');
    expect(svg).not.toContain("1.211");
    expect(svg).not.toContain("0.211");
    expect(svg).toMatch(/>1<\/text><text[^>]*>0<\/text>/); // axis labels 1 (top) and 0 (bottom)
  });
});
