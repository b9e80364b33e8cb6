/**
 * @module The policy object and its admission shards as the rest of the Worker uses them: each
 * object's logic and RPC interface for its class, and the request bodies of `/v1/policy` for the
 * routes. What `GET /v1/policy` answers is a wire type: src/schemas/policy.ts.
 */
export type { AdmissionFence } from "./admission-fence";
export type { AdmissionShardApi } from "./admission-shard-api";
export { AdmissionShardCore, type ApplyResult } from "./admission-shard-core";
export {
  PolicyUpdate,
  redactPolicy,
  restoreRedacted,
  SyncBeginRequest,
  SyncEndRequest,
} from "./policy-api";
export { PolicyCore } from "./policy-core";
export type { PolicyStoreApi } from "./policy-store-api";
