/** @module The catalog of batches (one instance, CATALOG_OBJECT_NAME): which batches exist, newest first. */
import { DurableObject } from "cloudflare:workers";
import type { BatchCatalogEntry } from "../src/schemas/batch-listing";
import {
  BatchCatalogCore,
  type BatchCatalogApi,
  type RegisterResult,
} from "../src/runtime/catalog";

/**
 * One row per batch, written once when the batch is submitted: batches are created far below a
 * Durable Object's ~1,000 requests per second, and no model call or step touches this object.
 */
export class BatchCatalog extends DurableObject<Env> implements BatchCatalogApi {
  readonly #core: BatchCatalogCore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#core = new BatchCatalogCore(ctx.storage.sql);
  }

  /** Adds a batch (a BatchCatalogEntry); idempotent by batch id. */
  register(entry: unknown): RegisterResult {
    return this.#core.register(entry);
  }

  /** One batch's entry, or null when it is not listed. */
  get(batchId: string): BatchCatalogEntry | null {
    return this.#core.get(batchId);
  }

  /** Batches newest first (a BatchListQuery). */
  list(query: unknown): BatchCatalogEntry[] {
    return this.#core.list(query);
  }
}
