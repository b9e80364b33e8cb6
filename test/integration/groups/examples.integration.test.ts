/** @module Integration group "examples": the examples and the agents the simulator scripts; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("examples-framework-calculators.integration.test.ts", async () =>
  void (await import("../examples-framework-calculators.integration.test")));
describe("examples-registry.integration.test.ts", async () =>
  void (await import("../examples-registry.integration.test")));
describe("examples-room-selector.integration.test.ts", async () =>
  void (await import("../examples-room-selector.integration.test")));
describe("examples-search-workflow.integration.test.ts", async () =>
  void (await import("../examples-search-workflow.integration.test")));
describe("examples-stepwise-agent.integration.test.ts", async () =>
  void (await import("../examples-stepwise-agent.integration.test")));
describe("calculator-trajectory.integration.test.ts", async () =>
  void (await import("../calculator-trajectory.integration.test")));
describe("osmosis-fidelity.integration.test.ts", async () =>
  void (await import("../osmosis-fidelity.integration.test")));
describe("code-environment.integration.test.ts", async () =>
  void (await import("../code-environment.integration.test")));
