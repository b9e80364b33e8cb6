/** @module Integration group "policy": the policy object and admission: each file restores the policy it changes; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("policy-api.integration.test.ts", async () =>
  void (await import("../runtime/policy/policy-api.integration.test")));
describe("policy-sync.integration.test.ts", async () =>
  void (await import("../runtime/policy/policy-sync.integration.test")));
describe("policy-sync-rollouts.integration.test.ts", async () =>
  void (await import("../runtime/policy/policy-sync-rollouts.integration.test")));
describe("admission-fence.integration.test.ts", async () =>
  void (await import("../runtime/policy/admission-fence.integration.test")));
describe("admission-release.integration.test.ts", async () =>
  void (await import("../runtime/policy/admission-release.integration.test")));
describe("admission-shard-storage.integration.test.ts", async () =>
  void (await import("../runtime/policy/admission-shard-storage.integration.test")));
describe("call-version-amend.integration.test.ts", async () =>
  void (await import("../gateway/call-version-amend.integration.test")));
describe("object-directory.integration.test.ts", async () =>
  void (await import("../runtime/objects/object-directory.integration.test")));
describe("pressure-control.integration.test.ts", async () =>
  void (await import("../runtime/policy/pressure-control.integration.test")));
describe("batch-staleness.integration.test.ts", async () =>
  void (await import("../runtime/batch/batch-staleness.integration.test")));
describe("interrupt-replica-health.integration.test.ts", async () =>
  void (await import("../gateway/interrupt-replica-health.integration.test")));
