/** @module Reaching the catalog of batches (one Durable Object, named "default"). */
import type { BatchCatalog } from "../durable-objects/batch-catalog";
import type { AppEnv } from "./env";
import type { RpcSurface } from "../src/rpc-surface";

/** Name of the one BatchCatalog instance. */
export const CATALOG_OBJECT_NAME = "default";

/** The RPC surface of the BatchCatalog stub, derived from the class. */
export type CatalogRpc = RpcSurface<BatchCatalog>;

/** The BatchCatalog stub. */
export function catalogStub(env: AppEnv): CatalogRpc {
  const namespace = env.BATCH_CATALOG;
  return namespace.get(namespace.idFromName(CATALOG_OBJECT_NAME)) as unknown as CatalogRpc;
}
