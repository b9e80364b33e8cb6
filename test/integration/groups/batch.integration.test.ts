/** @module Integration group "batch": batches: submission, validation, sources, listing, control and external runners; the files run one after another in one workerd (README.md here says why). */
import { describe } from "vitest";

describe("batch-control.integration.test.ts", async () => void (await import("../batch-control.integration.test")));
describe("batch-fanout.integration.test.ts", async () => void (await import("../batch-fanout.integration.test")));
describe("batch-listing.integration.test.ts", async () => void (await import("../batch-listing.integration.test")));
describe("batch-parquet-codecs.integration.test.ts", async () => void (await import("../batch-parquet-codecs.integration.test")));
describe("batch-recovery.integration.test.ts", async () => void (await import("../batch-recovery.integration.test")));
describe("batch-signal.integration.test.ts", async () => void (await import("../batch-signal.integration.test")));
describe("batch-sources.integration.test.ts", async () => void (await import("../batch-sources.integration.test")));
describe("batch-validation.integration.test.ts", async () => void (await import("../batch-validation.integration.test")));
describe("external-rollouts.integration.test.ts", async () => void (await import("../external-rollouts.integration.test")));
