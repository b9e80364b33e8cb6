/**
 * @module The edge-rollout Worker with the examples registered: `npx wrangler dev examples/worker.ts`
 * (or `wrangler deploy examples/worker.ts`) serves the same API, bindings and Durable Objects as
 * `functions/worker.ts`, plus the example agents.
 */
import "./index";

export * from "../functions/worker";
export { default } from "../functions/worker";
