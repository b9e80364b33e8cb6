import { describe, expect, it } from "vitest";
import { AgentTask } from "../../../src/schemas/agent-task";
import { AgentRegistry } from "../../../src/sdk/agent-registry";
import { AgentContractError } from "../../../src/sdk/contract-error";
import { defineLitAgent } from "../../../src/sdk/define-lit-agent";
import { LitAgent } from "../../../src/sdk/lit-agent";
import type { RolloutInfo } from "../../../src/sdk/rollout-info";

class Plain extends LitAgent {
  override rollout(task: AgentTask) {
    return task.problem.length;
  }
}
class ByMode extends LitAgent<{ q: string }> {
  override trainingRollout() {
    return 1;
  }
  override validationRollout() {
    return 0;
  }
}
class Nothing extends LitAgent {}

const info = (mode: "train" | "val") => ({ mode }) as RolloutInfo;
const task = AgentTask.parse({ problem: "abc" });

describe("LitAgent", () => {
  it("routes both modes to rollout unless they are overridden", () => {
    const agent = new Plain();
    expect(agent.trainingRollout(task, {} as never, info("train"))).toBe(3);
    expect(agent.validationRollout(task, {} as never, info("val"))).toBe(3);
    expect(() => new Nothing().trainingRollout(task, {} as never, info("train"))).toThrow(
      AgentContractError,
    );
  });
});

describe("defineLitAgent", () => {
  it("registers a class that overrides rollout, or both mode methods, with a task mapping", () => {
    const registry = new AgentRegistry();
    expect(defineLitAgent({ name: "plain", agentClass: Plain }, registry)).toMatchObject({
      kind: "lit",
      name: "plain",
      resources: {},
    });
    const byMode = defineLitAgent(
      { name: "by-mode", agentClass: ByMode, task: (t) => ({ q: t.problem }) },
      registry,
    );
    expect(byMode.task(task)).toEqual({ q: "abc" });
    expect(registry.names()).toEqual(["by-mode", "plain"]);
  });

  it("refuses a class that overrides nothing, or is not a LitAgent", () => {
    const registry = new AgentRegistry();
    expect(() => defineLitAgent({ name: "nothing", agentClass: Nothing }, registry)).toThrow(
      'agent "nothing": Nothing must override rollout, or both trainingRollout and validationRollout',
    );
    expect(() =>
      defineLitAgent({ name: "stranger", agentClass: class {} as never }, registry),
    ).toThrow("agentClass must be a class extending LitAgent");
  });
});
