/**
 * @module The folder `drain --format arrow` writes: one Arrow IPC stream file (`part-<n>.arrows`)
 * per pull, never the same sample twice. pyarrow reads each with `pyarrow.ipc.open_stream`.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { ArrowTable } from "../../src/sink/formats/arrow/arrow-format";
import { decodeArrowStream } from "../../src/sink/formats/arrow/arrow-read";
import {
  columnsToSamples,
  encodeSampleTable,
  readSampleTable,
} from "../../src/sink/formats/sample-columns";
import type { Vector } from "../../src/sink/formats/arrow/vectors";
import { OperationError } from "./errors";
import { sampleKey } from "./sample-file";

const PART = /^part-(\d{6,})\.arrows$/;

/** `<rollout_id>#<segment_index>` of each row of a sample table. */
function keysOf(table: ArrowTable): string[] {
  const column = (name: string) => table.columns.find((c) => c.name === name)!.vector;
  const ids = (column("rollout_id") as Extract<Vector, { type: "utf8" }>).values;
  const segments = (column("segment_index") as Extract<Vector, { type: "int64" }>).values;
  return ids.map((id, i) => sampleKey({ rollout_id: id!, segment_index: segments[i]! }));
}

function writeDurably(dir: string, name: string, bytes: Uint8Array): void {
  const temporary = join(dir, `.${name}.tmp`);
  const fd = openSync(temporary, "w");
  try {
    for (let offset = 0; offset < bytes.length;)
      offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // A part appears whole or not at all; the folder's fsync makes the rename itself durable.
  renameSync(temporary, join(dir, name));
  const dirFd = openSync(dir, "r");
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

/**
 * A folder of sample tables. Opening reads the keys its parts hold (so a drain re-run after a
 * crash between writing and acking skips them) and removes temporary files a crash mid-write
 * left (their samples were not acked and will be delivered again). Every part is fsynced and
 * renamed into place before `append` returns, so the ack that follows never acknowledges
 * samples that are not on disk.
 */
export class SampleArrowDir {
  readonly path: string;
  /** Samples the folder held when opened. */
  readonly existing: number;
  /** Bytes of partial parts that opening removed. */
  readonly repairedBytes: number;
  readonly #keys: Set<string>;
  #next: number;

  private constructor(path: string, keys: Set<string>, next: number, repairedBytes: number) {
    this.path = path;
    this.#keys = keys;
    this.existing = keys.size;
    this.#next = next;
    this.repairedBytes = repairedBytes;
  }

  /** Opens (or creates) the folder `path`. */
  static open(path: string): SampleArrowDir {
    if (existsSync(path) && !statSync(path).isDirectory())
      throw new OperationError(
        `${path} is not a folder; --format arrow writes a folder of part-<n>.arrows files`,
      );
    mkdirSync(path, { recursive: true });
    const keys = new Set<string>();
    let next = 1;
    let repaired = 0;
    for (const name of readdirSync(path).sort()) {
      if (name.endsWith(".tmp")) {
        repaired += readFileSync(join(path, name)).length;
        rmSync(join(path, name));
        continue;
      }
      const part = PART.exec(name);
      if (!part) continue;
      next = Math.max(next, Number(part[1]) + 1);
      try {
        for (const key of keysOf(readSampleTable(new Uint8Array(readFileSync(join(path, name))))))
          keys.add(key);
      } catch (error) {
        throw new OperationError(
          `${join(path, name)} is not a sample table an earlier drain wrote: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    return new SampleArrowDir(path, keys, next, repaired);
  }

  /**
   * Writes the samples of one Arrow pull body not yet in the folder as the next part: the body as
   * is when every sample is new (its schema metadata keeps the pull's groups and lease), else a
   * table of the new samples alone.
   */
  append(body: Uint8Array): { written: number; skipped: number } {
    const table = decodeArrowStream(body);
    const keys = keysOf(table);
    const fresh = keys
      .map((key, i) => (!this.#keys.has(key) && keys.indexOf(key) === i ? i : -1))
      .filter((i) => i >= 0);
    if (fresh.length > 0) {
      const samples = fresh.length === keys.length ? [] : columnsToSamples(table);
      const bytes =
        fresh.length === keys.length ? body : encodeSampleTable(fresh.map((i) => samples[i]!));
      writeDurably(this.path, `part-${String(this.#next).padStart(6, "0")}.arrows`, bytes);
      this.#next += 1;
      // Only once the part is on disk: a failed write must not make its samples look written.
      for (const i of fresh) this.#keys.add(keys[i]!);
    }
    return { written: fresh.length, skipped: keys.length - fresh.length };
  }

  /** Nothing to release (each part is closed as it is written); here for symmetry with SampleFile. */
  close(): void {}
}
