/** @module Integration group "policy": the policy object and admission: each file restores the policy it changes; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("policy-api.integration.test.ts", async () =>
  void (await import("../policy-api.integration.test")));
describe("policy-sync.integration.test.ts", async () =>
  void (await import("../policy-sync.integration.test")));
describe("policy-sync-rollouts.integration.test.ts", async () =>
  void (await import("../policy-sync-rollouts.integration.test")));
describe("admission-fence.integration.test.ts", async () =>
  void (await import("../admission-fence.integration.test")));
describe("admission-release.integration.test.ts", async () =>
  void (await import("../admission-release.integration.test")));
describe("admission-shard-storage.integration.test.ts", async () =>
  void (await import("../admission-shard-storage.integration.test")));
describe("call-version-amend.integration.test.ts", async () =>
  void (await import("../call-version-amend.integration.test")));
describe("object-directory.integration.test.ts", async () =>
  void (await import("../object-directory.integration.test")));
