/**
 * @module An R2 bucket as the blob ports a session, a batch tracker and the results consumer are
 * given, and byte ranges of stored objects streamed out. Worker code only: it takes an `R2Bucket`.
 */
export { r2Blobs, r2SizedReader } from "./r2-blobs";
export { streamSpans } from "./r2-span-stream";
