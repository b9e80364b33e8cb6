import { describe, expect, it } from "vitest";
import { MathAgent } from "../../../src/agents/math/math-agent";
import { MathEnv } from "../../../src/agents/math/math-env";
import { AgentTask } from "../../../src/schemas/agent-task";
import { Step } from "../../../src/schemas/step";
import { AgentRegistry, defineAgent } from "../../../src/sdk/agent-registry";

const task = AgentTask.parse({ problem: "p" });
const stepWith = (index: number, reward: number) =>
  Step.parse({
    step_id: `r/step/${index}`,
    step_index: index,
    action: null,
    observation: null,
    reward,
  });

describe("defineAgent", () => {
  it("fills envArgs, agentArgs and a reward that sums the step rewards", () => {
    const registry = new AgentRegistry();
    const definition = defineAgent(
      { name: "summing", envClass: MathEnv, agentClass: MathAgent },
      registry,
    );
    expect(definition).toMatchObject({
      kind: "stepwise",
      name: "summing",
      envArgs: {},
      agentArgs: {},
    });
    const steps = [stepWith(0, 0.25), stepWith(1, 0), stepWith(2, 1.5)];
    expect(definition.computeTrajectoryReward({ task, steps })).toBe(1.75);
    expect(definition.computeTrajectoryReward({ task, steps: [] })).toBe(0);
    expect(registry.get("summing")).toBe(definition);
  });

  it("keeps the options it is given over the defaults", () => {
    const registry = new AgentRegistry();
    const lastReward = ({ steps }: { steps: Step[] }) => steps.at(-1)?.reward ?? 0;
    const definition = defineAgent(
      {
        name: "custom",
        envClass: MathEnv,
        agentClass: MathAgent,
        envArgs: { level: 2 },
        computeTrajectoryReward: lastReward,
      },
      registry,
    );
    expect(definition.envArgs).toEqual({ level: 2 });
    expect(
      definition.computeTrajectoryReward({ task, steps: [stepWith(0, 3), stepWith(1, 0.5)] }),
    ).toBe(0.5);
  });

  it("falls back to the defaults for options passed as undefined", () => {
    const registry = new AgentRegistry();
    const definition = defineAgent(
      {
        name: "maybe",
        envClass: MathEnv,
        agentClass: MathAgent,
        envArgs: undefined,
        computeTrajectoryReward: undefined,
      },
      registry,
    );
    expect(definition.envArgs).toEqual({});
    expect(definition.computeTrajectoryReward({ task, steps: [stepWith(0, 2)] })).toBe(2);
  });

  it("rejects a second agent under the same name and keeps the first", () => {
    const registry = new AgentRegistry();
    const first = defineAgent(
      { name: "twice", envClass: MathEnv, agentClass: MathAgent },
      registry,
    );
    expect(() =>
      defineAgent({ name: "twice", envClass: MathEnv, agentClass: MathAgent }, registry),
    ).toThrow(/already registered/);
    expect(registry.get("twice")).toBe(first);
    expect(registry.names()).toEqual(["twice"]);
  });

  it("rejects names that are empty, upper-case, too long or start with punctuation", () => {
    const registry = new AgentRegistry();
    for (const name of ["", "Math", "has space", "-dash", ".dot", "a".repeat(65), "naïve"]) {
      expect(
        () => defineAgent({ name, envClass: MathEnv, agentClass: MathAgent }, registry),
        name,
      ).toThrow(TypeError);
    }
    expect(registry.names()).toEqual([]);
    defineAgent({ name: "a".repeat(64), envClass: MathEnv, agentClass: MathAgent }, registry);
    defineAgent({ name: "v2.math_agent-x", envClass: MathEnv, agentClass: MathAgent }, registry);
    expect(registry.names()).toHaveLength(2);
  });
});

describe("AgentRegistry", () => {
  it("keeps separate instances independent", () => {
    const one = new AgentRegistry();
    const two = new AgentRegistry();
    defineAgent({ name: "shared-name", envClass: MathEnv, agentClass: MathAgent }, one);
    expect(two.get("shared-name")).toBeUndefined();
    expect(() =>
      defineAgent({ name: "shared-name", envClass: MathEnv, agentClass: MathAgent }, two),
    ).not.toThrow();
    expect(one.get("shared-name")).not.toBe(two.get("shared-name"));
  });

  it("lists names sorted", () => {
    const registry = new AgentRegistry();
    for (const name of ["zeta", "alpha", "mid"])
      defineAgent({ name, envClass: MathEnv, agentClass: MathAgent }, registry);
    expect(registry.names()).toEqual(["alpha", "mid", "zeta"]);
  });
});
