/** @module An R2 bucket as the BlobStorePort the sink and datasets use. */
import type { BlobStorePort } from "../src/ports";

/** Wraps an R2 binding: put with a content type, get as bytes (null when absent). */
export function r2Blobs(bucket: R2Bucket): BlobStorePort {
  return {
    async put(key, body, contentType) {
      await bucket.put(key, body, { httpMetadata: { contentType } });
    },
    async get(key) {
      const object = await bucket.get(key);
      return object ? object.arrayBuffer() : null;
    },
  };
}
