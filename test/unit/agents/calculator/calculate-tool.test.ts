import { describe, expect, it } from "vitest";
import { CALCULATE_TOOL, runCalculate } from "../../../../src/agents/calculator/calculate-tool";

describe("runCalculate", () => {
  it("evaluates the expression argument and formats the result", () => {
    expect(runCalculate(JSON.stringify({ expression: "(17 + 25) * 3" }))).toBe("126");
    expect(runCalculate('{"expression": "1 / 3"}')).toBe("0.333333");
  });

  it("answers bad expressions with an error string instead of throwing", () => {
    expect(runCalculate('{"expression": "1 / 0"}')).toBe("error: division by zero");
    expect(runCalculate('{"expression": "2 +"}')).toMatch(/^error: /);
  });

  it("answers malformed or mistyped arguments with an error string", () => {
    for (const raw of ["not json", "", "null", "[]", '{"expression": 3}', '{"expr": "1+1"}']) {
      expect(runCalculate(raw), raw).toMatch(/^error: /);
    }
  });

  it("describes one required string parameter named expression", () => {
    expect(CALCULATE_TOOL.function.name).toBe("calculate");
    expect(CALCULATE_TOOL.function.parameters).toMatchObject({
      required: ["expression"],
      properties: { expression: { type: "string" } },
    });
  });
});
