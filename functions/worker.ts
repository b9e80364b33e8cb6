/** @module The Worker entry: HTTP API, queue consumers and Durable Object classes. */
import "../src/agents";
import "./code-sandbox";
import { createApp } from "./app";
import type { AppEnv } from "./env";
import { handleBatchesBatch } from "./batches.consumer";
import { handleResultsBatch } from "./results.consumer";
import { handleWorkBatch } from "./work.consumer";

export { RolloutSession } from "../durable-objects/rollout-session";
export { PolicyStore } from "../durable-objects/policy-store";
export { AdmissionShard } from "../durable-objects/admission-shard";
export { RolloutDriver } from "./drive.entrypoint";
export { TrainerFeed } from "../durable-objects/trainer-feed";
export { BatchTracker } from "../durable-objects/batch-tracker";
export { ClaimQueue } from "../durable-objects/claim-queue";
export { BatchCatalog } from "../durable-objects/batch-catalog";
export { OnlineControl } from "../durable-objects/online-control";
export { OnlineApp } from "../durable-objects/online-app";

const app = createApp();

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    // Queue names are fixed in wrangler.toml; a renamed deployment renames them here too.
    switch (batch.queue) {
      case "edge-rollout-work":
        return handleWorkBatch(batch, env);
      case "edge-rollout-results":
        return handleResultsBatch(batch, env);
      case "edge-rollout-batches":
        return handleBatchesBatch(batch, env);
      default:
        console.error(`no consumer for queue ${batch.queue}`);
    }
  },
} satisfies ExportedHandler<AppEnv>;
