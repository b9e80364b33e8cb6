/** Integration: examples/index.ts registers every example agent under its own name. */
import { describe, expect, it } from "vitest";
import "../../../examples";
import * as exampleWorker from "../../../examples/worker";
import * as coreWorker from "../../../functions/worker";
import { getAgentByName } from "../../../src/sdk";
import { api } from "../../fixtures/rollouts";

const EXAMPLES = {
  "room-selector": "function",
  "search-workflow": "workflow",
  "openai-agents-calculator": "function",
  "ai-sdk-calculator": "function",
  "guess-number": "stepwise",
};

describe("the examples' registration module (integration)", () => {
  it("registers each example under a unique name with its engine kind, listed by GET /v1/agents", async () => {
    expect(
      Object.fromEntries(Object.keys(EXAMPLES).map((name) => [name, getAgentByName(name)?.kind])),
    ).toEqual(EXAMPLES);
    const { agents } = (await (await api("/v1/agents")).json()) as { agents: string[] };
    expect(agents).toEqual(expect.arrayContaining(Object.keys(EXAMPLES)));
  });

  it("examples/worker.ts is the core Worker (same handlers and Durable Object classes) with the examples registered", () => {
    expect(Object.keys(exampleWorker).sort()).toEqual(Object.keys(coreWorker).sort());
    expect(exampleWorker.default).toBe(coreWorker.default);
    expect(exampleWorker.RolloutSession).toBe(coreWorker.RolloutSession);
  });
});
