/** @module Integration group "authoring": agent authoring: functions, workflows, emitters, engines and attempts; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("authoring-attempts.integration.test.ts", async () =>
  void (await import("../sdk/authoring-attempts.integration.test")));
describe("authoring-emitters.integration.test.ts", async () =>
  void (await import("../sdk/authoring-emitters.integration.test")));
describe("authoring-function.integration.test.ts", async () =>
  void (await import("../sdk/authoring-function.integration.test")));
describe("authoring-lit-agent.integration.test.ts", async () =>
  void (await import("../sdk/authoring-lit-agent.integration.test")));
describe("authoring-workflow.integration.test.ts", async () =>
  void (await import("../sdk/authoring-workflow.integration.test")));
describe("stepwise-emitters.integration.test.ts", async () =>
  void (await import("../sdk/stepwise-emitters.integration.test")));
describe("seed-engines.integration.test.ts", async () =>
  void (await import("../runtime/engines/seed-engines.integration.test")));
describe("seed-stepwise.integration.test.ts", async () =>
  void (await import("../sdk/seed-stepwise.integration.test")));
