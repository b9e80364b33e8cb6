import { describe, expect, it } from "vitest";
import { AgentWorkflow, AgentWorkflowOutput, Grader } from "../../../src/sdk/agent-workflow";
import { defineWorkflow } from "../../../src/sdk/define-workflow";
import { AgentRegistry } from "../../../src/sdk/agent-registry";

class Echo extends AgentWorkflow {
  run() {
    return [];
  }
}
class Fixed extends Grader {
  grade() {
    return 1;
  }
}

const messages = [{ role: "user" as const, content: "hi" }];

describe("AgentWorkflowOutput", () => {
  it("accepts messages with finite metrics, metrics defaulting to none", () => {
    expect(AgentWorkflowOutput.parse({ messages })).toEqual({ messages, metrics: {} });
    expect(AgentWorkflowOutput.parse({ messages, metrics: { len: 2 } }).metrics).toEqual({
      len: 2,
    });
  });

  it("refuses non-finite metrics and unknown fields, naming them", () => {
    const nan = AgentWorkflowOutput.safeParse({
      messages,
      metrics: { x: Number.NaN, y: Number.NEGATIVE_INFINITY },
    });
    expect(nan.error!.issues.map((issue) => [issue.path.join("."), issue.message])).toEqual([
      ["metrics.x", "a metric must be a finite number (got NaN)"],
      ["metrics.y", "a metric must be a finite number (got -Infinity)"],
    ]);
    const extra = AgentWorkflowOutput.safeParse({ messages, reward: 1 });
    expect(extra.error!.issues).toEqual([
      expect.objectContaining({ code: "unrecognized_keys", keys: ["reward"] }),
    ]);
  });
});

describe("defineWorkflow", () => {
  it("registers a workflow with its grader and config", () => {
    const registry = new AgentRegistry();
    expect(
      defineWorkflow({ name: "echo", workflow: Echo, grader: Fixed, config: { k: 1 } }, registry),
    ).toMatchObject({ kind: "workflow", grader: Fixed, config: { k: 1 }, resources: {} });
    expect(defineWorkflow({ name: "ungraded", workflow: Echo }, registry)).toMatchObject({
      grader: null,
      config: {},
    });
  });

  it("refuses classes that do not extend AgentWorkflow or Grader", () => {
    const registry = new AgentRegistry();
    expect(() => defineWorkflow({ name: "w", workflow: class {} as never }, registry)).toThrow(
      "workflow must be a class extending AgentWorkflow",
    );
    expect(() =>
      defineWorkflow({ name: "g", workflow: Echo, grader: class {} as never }, registry),
    ).toThrow("grader must be a class extending Grader");
  });
});

describe("AgentWorkflowConfig (Osmosis)", () => {
  it("accepts info beside messages and metrics", () => {
    expect(AgentWorkflowOutput.parse({ messages, info: { tool: "search", hits: 3 } }).info).toEqual(
      { tool: "search", hits: 3 },
    );
  });

  it("takes name, description and concurrency.max_concurrent from the config, and hands the config to both constructors", () => {
    const registry = new AgentRegistry();
    const definition = defineWorkflow(
      {
        workflow: Echo,
        grader: Fixed,
        config: {
          name: "from-config",
          description: "echoes",
          concurrency: { max_concurrent: 4 },
          top_k: 3,
        },
      },
      registry,
    );
    expect(definition).toMatchObject({
      name: "from-config",
      description: "echoes",
      maxConcurrent: 4,
      config: { top_k: 3 },
    });
    expect(registry.get("from-config")).toBe(definition);
    expect(new definition.workflow(definition.config).config).toBe(definition.config);
    expect(new definition.grader!(definition.config).config).toBe(definition.config);
    expect(defineWorkflow({ name: "unlimited", workflow: Echo }, registry)).toMatchObject({
      description: null,
      maxConcurrent: null,
    });
  });

  it("refuses a malformed concurrency limit or a config name that differs from the registered one, naming the field", () => {
    const registry = new AgentRegistry();
    expect(() =>
      defineWorkflow(
        { name: "bad", workflow: Echo, config: { concurrency: { max_concurrent: 0 } } },
        registry,
      ),
    ).toThrow(
      'agent "bad": config.concurrency.max_concurrent: concurrency.max_concurrent must be >= 1',
    );
    expect(() =>
      defineWorkflow({ name: "one", workflow: Echo, config: { name: "other" } }, registry),
    ).toThrow('agent "one": config.name is "other"; it must equal the registered name');
  });
});
