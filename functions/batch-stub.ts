/** @module Reaching a batch's tracker (one Durable Object per batch id). */
import type { BatchObjects } from "../src/runtime/batch/batch-delivery";
import { catalogStub } from "./catalog-stub";
import type { BatchTracker } from "../durable-objects/batch-tracker";
import type { AppEnv } from "./env";
import type { RpcSurface } from "../src/rpc-surface";

/** The RPC surface of the BatchTracker stub, derived from the class. */
export type BatchRpc = RpcSurface<BatchTracker>;

/** The BatchTracker stub for `batchId`. */
export function batchStub(env: AppEnv, batchId: string): BatchRpc {
  const namespace = env.BATCH_TRACKER;
  return namespace.get(namespace.idFromName(batchId)) as unknown as BatchRpc;
}

/** The trackers and the catalog, as batch starts and result reports reach them. */
export function batchObjects(env: AppEnv): BatchObjects {
  return { tracker: (batchId) => batchStub(env, batchId), catalog: () => catalogStub(env) };
}
