/**
 * @module Bytes a local stack has written to R2: Miniflare keeps each object's body as a file
 * under `<persist root>/r2/<bucket>/blobs/`, so summing those files (before and after a run)
 * says how many bytes the run's publications put, whatever their keys.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Total size of every R2 object body stored under `persistRoot` (0 when there is none yet). */
export function r2BlobBytes(persistRoot: string): number {
  const r2 = join(persistRoot, "r2");
  if (!existsSync(r2)) return 0;
  let total = 0;
  for (const bucket of readdirSync(r2)) {
    const blobs = join(r2, bucket, "blobs");
    if (!existsSync(blobs)) continue;
    for (const name of readdirSync(blobs)) total += statSync(join(blobs, name)).size;
  }
  return total;
}
