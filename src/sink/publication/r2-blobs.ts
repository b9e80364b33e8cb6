/** @module An R2 bucket as the ports the sink, datasets and the feed's inline pulls read and write through. */
import type { BlobStorePort, SizedBlobReader } from "../../ports";

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

/** Wraps an R2 binding as a SizedBlobReader: the object's size is known before its body is read. */
export function r2SizedReader(bucket: R2Bucket): SizedBlobReader {
  return {
    async get(key) {
      const object = await bucket.get(key);
      if (!object) return null;
      return {
        size: object.size,
        bytes: () => object.arrayBuffer(),
        discard: () => void object.body.cancel().catch(() => undefined),
      };
    },
  };
}
