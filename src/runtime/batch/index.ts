/**
 * @module A batch's tracker as the rest of the Worker uses it: the object's logic and RPC interface
 * for its class, and what routes and queue consumers call (starting a batch, its results, its
 * throughput). Files of this folder import each other, never this door.
 */
export { BatchCore } from "./batch-core";
export { startBatch } from "./batch-delivery";
export type { RolloutSessionsPort } from "./batch-ports";
export type { BatchIssue, ResultAck, SubmitResult } from "./batch-results";
export { BatchRunnersStore } from "./batch-runners";
export { batchOfGroupUid } from "./batch-state";
export { batchThroughput } from "./batch-throughput";
export type { BatchTrackerApi } from "./batch-tracker-api";
