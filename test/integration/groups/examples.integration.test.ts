/** @module Integration group "examples": the examples and the agents the simulator scripts; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("examples-framework-calculators.integration.test.ts", async () =>
  void (await import("../examples/examples-framework-calculators.integration.test")));
describe("examples-registry.integration.test.ts", async () =>
  void (await import("../examples/examples-registry.integration.test")));
describe("examples-room-selector.integration.test.ts", async () =>
  void (await import("../examples/examples-room-selector.integration.test")));
describe("examples-search-workflow.integration.test.ts", async () =>
  void (await import("../examples/examples-search-workflow.integration.test")));
describe("examples-stepwise-agent.integration.test.ts", async () =>
  void (await import("../examples/examples-stepwise-agent.integration.test")));
describe("calculator-trajectory.integration.test.ts", async () =>
  void (await import("../agents/calculator-trajectory.integration.test")));
describe("osmosis-fidelity.integration.test.ts", async () =>
  void (await import("../sdk/osmosis-fidelity.integration.test")));
describe("code-environment.integration.test.ts", async () =>
  void (await import("../sandbox/code-environment.integration.test")));
