import { describe, expect, expectTypeOf, it } from "vitest";
import { AgentRegistry } from "../../../src/sdk/agent-registry";
import { defineRollout, rollout } from "../../../src/sdk/define-rollout";
import type { PromptTemplate } from "../../../src/sdk/prompt-template";
import { jsonResource, promptTemplate, type LlmResource } from "../../../src/sdk/resources";

const resources = { promptTemplate: promptTemplate("Solve: {problem}") };

describe("defineRollout and rollout", () => {
  it("register a function agent that getAgentByName-style lookups find", () => {
    const registry = new AgentRegistry();
    const definition = rollout(
      async ({ task }) => (task.problem ? 1 : 0),
      { name: "fn-a" },
      registry,
    );
    expect(definition).toMatchObject({ kind: "function", name: "fn-a", resources: {} });
    expect(registry.get("fn-a")).toBe(definition);
    expect(
      defineRollout(
        { name: "fn-b", resources, run: ({ promptTemplate: t }) => t.template.length },
        registry,
      ).resources,
    ).toBe(resources);
  });

  it("type the context from the declared resources", () => {
    const registry = new AgentRegistry();
    defineRollout(
      {
        name: "typed",
        resources: {
          promptTemplate: promptTemplate("{x}"),
          rubric: jsonResource({ strict: true }),
        },
        run: ({ promptTemplate: template, rubric, llm }) => {
          expectTypeOf(template).toEqualTypeOf<PromptTemplate>();
          expectTypeOf(rubric).toEqualTypeOf<{ strict: boolean }>();
          expectTypeOf(llm).toEqualTypeOf<LlmResource>();
        },
      },
      registry,
    );
    expect(() =>
      // @ts-expect-error: `promptTemplat` is neither a context field nor a declared resource
      rollout(({ promptTemplat }) => promptTemplat, { name: "typo", resources }, registry),
    ).toThrow(TypeError);
  });

  it("refuses at registration a destructured field that is neither a context field nor declared, naming it", () => {
    const registry = new AgentRegistry();
    const untyped = (({
      task,
      promptTemplate: template,
    }: {
      task: unknown;
      promptTemplate: unknown;
    }) => [task, template]) as never;
    expect(() => rollout(untyped, { name: "undeclared" }, registry)).toThrow(
      'agent "undeclared" asks its context for "promptTemplate", which is neither a context field (task, llm, rollout, signal, artifacts, heartbeat) nor a declared resource (none declared); declare it in resources, e.g. resources: { promptTemplate: promptTemplate("…") }',
    );
    expect(registry.names()).toEqual([]);
  });

  it("accepts a function that takes its context whole", () => {
    const registry = new AgentRegistry();
    expect(() =>
      rollout((ctx) => (ctx.task.problem ? 1 : 0), { name: "whole" }, registry),
    ).not.toThrow();
  });

  it("refuses a resource that hides a context field or that the store cannot name", () => {
    const registry = new AgentRegistry();
    expect(() =>
      defineRollout(
        { name: "shadow", resources: { llm: jsonResource(1) } as never, run: () => 1 },
        registry,
      ),
    ).toThrow('resource "llm" would hide the context field');
    expect(() =>
      defineRollout(
        {
          name: "bad-name",
          resources: { p: promptTemplate("x", { name: "has space" }) },
          run: () => 1,
        },
        registry,
      ),
    ).toThrow('resource "p" has name "has space"');
    expect(() =>
      defineRollout({ name: "not-spec", resources: { p: "x" } as never, run: () => 1 }, registry),
    ).toThrow("must be declared with promptTemplate");
  });
});
