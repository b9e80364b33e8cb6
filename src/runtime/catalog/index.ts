/** @module The list of batches as its Durable Object class uses it: the logic and the RPC interface. */
export type { BatchCatalogApi } from "./batch-catalog-api";
export { BatchCatalogCore, type RegisterResult } from "./batch-catalog-core";
