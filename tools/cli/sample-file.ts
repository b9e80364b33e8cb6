/** @module The JSONL file `drain` appends to: one sample per line, never the same sample twice. */
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readSync,
  statSync,
  truncateSync,
  writeSync,
} from "node:fs";
import { OperationError } from "./errors";

/** What identifies a training sample: its rollout and its segment (a rollout may yield several). */
export interface SampleIdentity {
  rollout_id: string;
  segment_index: number;
}

/** `<rollout_id>#<segment_index>`. */
export function sampleKey(sample: SampleIdentity): string {
  return `${sample.rollout_id}#${sample.segment_index}`;
}

const NEWLINE = 0x0a;

/** Keys of the complete lines of an existing file, and the byte length of those lines. */
function scan(path: string): { keys: Set<string>; validBytes: number; size: number } {
  const keys = new Set<string>();
  const size = statSync(path).size;
  const fd = openSync(path, "r");
  const buffer = Buffer.alloc(1 << 20);
  let carry = Buffer.alloc(0);
  let position = 0;
  let validBytes = 0;
  let lineNumber = 0;
  try {
    for (
      let read = readSync(fd, buffer, 0, buffer.length, position);
      read > 0;
      read = readSync(fd, buffer, 0, buffer.length, position)
    ) {
      position += read;
      const data =
        carry.length > 0
          ? Buffer.concat([carry, buffer.subarray(0, read)])
          : buffer.subarray(0, read);
      let start = 0;
      for (let end = data.indexOf(NEWLINE, start); end >= 0; end = data.indexOf(NEWLINE, start)) {
        lineNumber += 1;
        const line = data.subarray(start, end).toString("utf8").trim();
        if (line !== "") keys.add(sampleKey(parseLine(line, path, lineNumber)));
        validBytes += end - start + 1;
        start = end + 1;
      }
      carry = Buffer.from(data.subarray(start));
    }
  } finally {
    closeSync(fd);
  }
  return { keys, validBytes, size };
}

/** write(2) may write less than asked; loop until every byte is written. */
function writeAll(fd: number, bytes: Buffer): void {
  for (let offset = 0; offset < bytes.length;)
    offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

function parseLine(line: string, path: string, lineNumber: number): SampleIdentity {
  try {
    const value = JSON.parse(line) as Partial<SampleIdentity>;
    if (typeof value.rollout_id === "string" && typeof value.segment_index === "number")
      return value as SampleIdentity;
  } catch {
    // reported below
  }
  throw new OperationError(
    `${path} line ${lineNumber} is not a training sample; drain into a new file or one an earlier drain wrote`,
  );
}

/**
 * An append-only JSONL file of training samples. Opening an existing file reads the keys it holds
 * (so re-running `drain` after a crash between writing and acking skips what is already there)
 * and cuts off a partial last line left by a crash mid-write (those samples were not acked and
 * will be delivered again). Every append is fsynced before it returns, so an ack that follows it
 * never acknowledges samples that are not on disk.
 */
export class SampleFile {
  readonly path: string;
  /** Samples the file held when opened. */
  readonly existing: number;
  /** Bytes of a partial last line that opening removed (0 when the file was whole). */
  readonly repairedBytes: number;
  readonly #keys: Set<string>;
  readonly #fd: number;

  private constructor(path: string, keys: Set<string>, repairedBytes: number) {
    this.path = path;
    this.#keys = keys;
    this.existing = keys.size;
    this.repairedBytes = repairedBytes;
    this.#fd = openSync(path, "a");
  }

  /** Opens (or creates) `path`; see the class comment for what opening an existing file does. */
  static open(path: string): SampleFile {
    if (!existsSync(path)) return new SampleFile(path, new Set(), 0);
    const { keys, validBytes, size } = scan(path);
    if (validBytes < size) truncateSync(path, validBytes);
    return new SampleFile(path, keys, size - validBytes);
  }

  /** Whether the file already holds this sample. */
  has(sample: SampleIdentity): boolean {
    return this.#keys.has(sampleKey(sample));
  }

  /** Appends the samples not yet in the file, as one write, then fsyncs. */
  append(samples: ReadonlyArray<SampleIdentity>): { written: number; skipped: number } {
    const fresh = new Map<string, string>();
    for (const sample of samples) {
      const key = sampleKey(sample);
      if (!this.#keys.has(key) && !fresh.has(key)) fresh.set(key, JSON.stringify(sample));
    }
    if (fresh.size > 0) {
      writeAll(this.#fd, Buffer.from(`${[...fresh.values()].join("\n")}\n`));
      fsyncSync(this.#fd);
      // Only once the lines are on disk: a failed write must not make them look written.
      for (const key of fresh.keys()) this.#keys.add(key);
    }
    return { written: fresh.size, skipped: samples.length - fresh.size };
  }

  close(): void {
    closeSync(this.#fd);
  }
}
