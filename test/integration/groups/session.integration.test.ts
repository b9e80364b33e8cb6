/** @module Integration group "session": the rollout session object: its storage, watchdog, driver and termination; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("session-memory.integration.test.ts", async () =>
  void (await import("../runtime/session/session-memory.integration.test")));
describe("session-state-in-step.integration.test.ts", async () =>
  void (await import("../runtime/session/session-state-in-step.integration.test")));
describe("session-commits.integration.test.ts", async () =>
  void (await import("../runtime/session/session-commits.integration.test")));
describe("session-storage-cost.integration.test.ts", async () =>
  void (await import("../runtime/session/session-storage-cost.integration.test")));
describe("session-large-calls.integration.test.ts", async () =>
  void (await import("../runtime/session/session-large-calls.integration.test")));
describe("watchdog.integration.test.ts", async () =>
  void (await import("../runtime/session/watchdog.integration.test")));
describe("driver-resume.integration.test.ts", async () =>
  void (await import("../runtime/driver/driver-resume.integration.test")));
describe("drive-admissions.integration.test.ts", async () =>
  void (await import("../runtime/driver/drive-admissions.integration.test")));
describe("work-consumer.integration.test.ts", async () =>
  void (await import("../functions/work-consumer.integration.test")));
describe("termination-limits.integration.test.ts", async () =>
  void (await import("../runtime/driver/termination-limits.integration.test")));
describe("rollout-events.integration.test.ts", async () =>
  void (await import("../functions/rollout-events.integration.test")));
describe("rollouts-api.integration.test.ts", async () =>
  void (await import("../functions/rollouts-api.integration.test")));
describe("tree-fork.integration.test.ts", async () =>
  void (await import("../runtime/session/tree-fork.integration.test")));
describe("object-surfaces.integration.test.ts", async () =>
  void (await import("../durable-objects/object-surfaces.integration.test")));
