/** @module The Worker entry: HTTP API, queue consumers and Durable Object classes. */
import "../src/agents";
import { createApp } from "./app";
import type { AppEnv } from "./env";
import { handleWorkBatch } from "./work.consumer";

export { RolloutSession } from "../durable-objects/rollout-session";
export { PolicyStore } from "../durable-objects/policy-store";

const app = createApp();

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    if (batch.queue.startsWith("edge-rollout-work")) return handleWorkBatch(batch, env);
    console.error(`no consumer for queue ${batch.queue}`);
  },
} satisfies ExportedHandler<AppEnv>;
