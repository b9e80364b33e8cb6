/** @module Integration group "http": the HTTP surface: the gateway, input guards, auth and export; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("gateway-openai.integration.test.ts", async () =>
  void (await import("../gateway/gateway-openai.integration.test")));
describe("gateway-choices.integration.test.ts", async () =>
  void (await import("../gateway/gateway-choices.integration.test")));
describe("gateway-upstream-errors.integration.test.ts", async () =>
  void (await import("../gateway/gateway-upstream-errors.integration.test")));
describe("call-ids.integration.test.ts", async () =>
  void (await import("../gateway/call-ids.integration.test")));
describe("gateway-keys.integration.test.ts", async () =>
  void (await import("../gateway/gateway-keys.integration.test")));
describe("input-guards.integration.test.ts", async () =>
  void (await import("../functions/input-guards.integration.test")));
describe("bearer-auth.integration.test.ts", async () =>
  void (await import("../functions/bearer-auth.integration.test")));
describe("dashboard-auth.integration.test.ts", async () =>
  void (await import("../functions/dashboard-auth.integration.test")));
describe("deployment-guard.integration.test.ts", async () =>
  void (await import("../functions/deployment-guard.integration.test")));
describe("otlp-export.integration.test.ts", async () =>
  void (await import("../sink/otlp-export.integration.test")));
describe("upstream-streams.integration.test.ts", async () =>
  void (await import("../gateway/upstream-streams.integration.test")));
