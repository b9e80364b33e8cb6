/**
 * @module What a local stack has written to R2: Miniflare keeps each object's body as a file
 * under `<persist root>/r2/<bucket>/blobs/`, so counting and summing those files (before and after
 * a run) says how many objects and bytes the run's publications put, whatever their keys.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** R2 objects stored and the bytes of their bodies (so far, or per rollout). */
export interface R2Stored {
  objects: number;
  bytes: number;
}

/** Every R2 object body stored under `persistRoot` (none yet: zeros). */
export function r2Stored(persistRoot: string): R2Stored {
  const stored: R2Stored = { objects: 0, bytes: 0 };
  const r2 = join(persistRoot, "r2");
  if (!existsSync(r2)) return stored;
  for (const bucket of readdirSync(r2)) {
    const blobs = join(r2, bucket, "blobs");
    if (!existsSync(blobs)) continue;
    for (const name of readdirSync(blobs)) {
      stored.objects += 1;
      stored.bytes += statSync(join(blobs, name)).size;
    }
  }
  return stored;
}

/** What was stored between two readings, per rollout of the `rollouts` that ran between them. */
export function storedPerRollout(before: R2Stored, after: R2Stored, rollouts: number): R2Stored {
  return {
    objects: (after.objects - before.objects) / rollouts,
    bytes: (after.bytes - before.bytes) / rollouts,
  };
}
