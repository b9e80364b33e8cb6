/** Unit: the objects and bytes a local stack's R2 publications stored, from Miniflare's blob files. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { r2Stored, storedPerRollout } from "../../../bench/kit/r2-bytes";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe("r2Stored", () => {
  it("counts and sums the object bodies of every bucket and nothing else", () => {
    const root = mkdtempSync(join(tmpdir(), "r2-bytes-"));
    roots.push(root);
    const empty = r2Stored(root);
    expect(empty).toEqual({ objects: 0, bytes: 0 });
    for (const [bucket, sizes] of [
      ["trajectories", [100, 250]],
      ["datasets", [7]],
    ] as const) {
      mkdirSync(join(root, "r2", bucket, "blobs"), { recursive: true });
      sizes.forEach((size, i) =>
        writeFileSync(join(root, "r2", bucket, "blobs", `blob-${i}`), "x".repeat(size)),
      );
    }
    // The simulator's own metadata is not an object body.
    mkdirSync(join(root, "r2", "miniflare-R2BucketObject"), { recursive: true });
    writeFileSync(
      join(root, "r2", "miniflare-R2BucketObject", "metadata.sqlite"),
      "y".repeat(4096),
    );
    const stored = r2Stored(root);
    expect(stored).toEqual({ objects: 3, bytes: 357 });
    expect(storedPerRollout(empty, stored, 2)).toEqual({ objects: 1.5, bytes: 178.5 });
  });
});
