/** @module Integration group "feed": the trainer feed: hand-made results into the default and per-test feed objects, no live rollouts; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("feed-ingest.integration.test.ts", async () =>
  void (await import("../runtime/feed/feed-ingest.integration.test")));
describe("feed-arrow.integration.test.ts", async () =>
  void (await import("../runtime/feed/feed-arrow.integration.test")));
describe("feed-staleness.integration.test.ts", async () =>
  void (await import("../runtime/feed/feed-staleness.integration.test")));
describe("feed-robustness.integration.test.ts", async () =>
  void (await import("../runtime/feed/feed-robustness.integration.test")));
describe("feed-filters.integration.test.ts", async () =>
  void (await import("../runtime/feed/feed-filters.integration.test")));
describe("feed-lease.integration.test.ts", async () =>
  void (await import("../runtime/feed/feed-lease.integration.test")));
describe("feed-signal.integration.test.ts", async () =>
  void (await import("../runtime/feed/feed-signal.integration.test")));
describe("feed-shards.integration.test.ts", async () =>
  void (await import("../runtime/feed/feed-shards.integration.test")));
describe("result-delivery.integration.test.ts", async () =>
  void (await import("../runtime/session/result-delivery.integration.test")));
describe("result-delivery-alarm.integration.test.ts", async () =>
  void (await import("../runtime/session/result-delivery-alarm.integration.test")));
