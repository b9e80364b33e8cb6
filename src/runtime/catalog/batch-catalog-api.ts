/** @module What the BatchCatalog object offers over RPC: the interface the class implements and its stubs are typed by. */
import { methodNames } from "../../rpc-surface";
import type { BatchCatalogEntry } from "../../schemas/batch-listing";
import type { RegisterResult } from "./batch-catalog-core";

/** The catalog of batches (one per deployment): which batches exist, newest first. */
export interface BatchCatalogApi {
  /** Adds a batch (a BatchCatalogEntry); idempotent by batch id. */
  register(entry: unknown): RegisterResult;
  /** One batch's entry, or null when it is not listed. */
  get(batchId: string): BatchCatalogEntry | null;
  /** Batches newest first (a BatchListQuery). */
  list(query: unknown): BatchCatalogEntry[];
}

/** Every method of BatchCatalogApi, at run time. */
export const BATCH_CATALOG_METHODS = methodNames<BatchCatalogApi>({
  register: true,
  get: true,
  list: true,
});
