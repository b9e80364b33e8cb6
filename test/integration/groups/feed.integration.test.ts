/** @module Integration group "feed": the trainer feed: hand-made results into the default and per-test feed objects, no live rollouts; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("feed-ingest.integration.test.ts", async () =>
  void (await import("../feed-ingest.integration.test")));
describe("feed-arrow.integration.test.ts", async () =>
  void (await import("../feed-arrow.integration.test")));
describe("feed-staleness.integration.test.ts", async () =>
  void (await import("../feed-staleness.integration.test")));
describe("feed-robustness.integration.test.ts", async () =>
  void (await import("../feed-robustness.integration.test")));
describe("feed-filters.integration.test.ts", async () =>
  void (await import("../feed-filters.integration.test")));
describe("feed-lease.integration.test.ts", async () =>
  void (await import("../feed-lease.integration.test")));
describe("feed-signal.integration.test.ts", async () =>
  void (await import("../feed-signal.integration.test")));
describe("feed-shards.integration.test.ts", async () =>
  void (await import("../feed-shards.integration.test")));
describe("result-delivery.integration.test.ts", async () =>
  void (await import("../result-delivery.integration.test")));
describe("result-delivery-alarm.integration.test.ts", async () =>
  void (await import("../result-delivery-alarm.integration.test")));
