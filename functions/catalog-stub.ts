/** @module Reaching the catalog of batches (one Durable Object, named "default"). */
import type { BatchCatalogEntry } from "../src/schemas/batch-listing";
import type { RegisterResult } from "../src/runtime/catalog/batch-catalog-core";
import type { AppEnv } from "./env";

/** Name of the one BatchCatalog instance. */
export const CATALOG_OBJECT_NAME = "default";

/** The RPC surface of the BatchCatalog stub, spelled out (the generic stub types are too deep for the compiler). */
export interface CatalogRpc {
  register(entry: unknown): Promise<RegisterResult>;
  list(query: unknown): Promise<BatchCatalogEntry[]>;
}

/** The BatchCatalog stub. */
export function catalogStub(env: AppEnv): CatalogRpc {
  const namespace = env.BATCH_CATALOG;
  return namespace.get(namespace.idFromName(CATALOG_OBJECT_NAME)) as unknown as CatalogRpc;
}
