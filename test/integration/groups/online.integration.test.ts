/** @module Integration group "online": online serving (docs/online.md); the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("online-keys.integration.test.ts", async () =>
  void (await import("../online/online-keys.integration.test")));
describe("online-serving.integration.test.ts", async () =>
  void (await import("../online/online-serving.integration.test")));
describe("online-feedback.integration.test.ts", async () =>
  void (await import("../online/online-feedback.integration.test")));
describe("online-guard.integration.test.ts", async () =>
  void (await import("../online/online-guard.integration.test")));
