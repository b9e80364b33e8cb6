import { describe, expect, it } from "vitest";
import { calculatorAgent, mathAgent } from "../../../src/agents";
import { CalculatorEnv } from "../../../src/agents/calculator/calculator-env";
import { MathEnv } from "../../../src/agents/math/math-env";
import { getAgentByName } from "../../../src/sdk/agent-registry";

describe("demo agents", () => {
  it("registers math and calculator in the default registry when imported", () => {
    expect(getAgentByName("math")).toBe(mathAgent);
    expect(getAgentByName("calculator")).toBe(calculatorAgent);
    expect(mathAgent.envClass).toBe(MathEnv);
    expect(calculatorAgent.envClass).toBe(CalculatorEnv);
  });
});
