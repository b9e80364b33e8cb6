/**
 * @module The body of an Arrow record batch: each column's buffers (validity, offsets, values) in
 * Arrow's depth-first order, laid out first and then written once into the frame's one buffer.
 */
import { lengthOf, type Vector } from "./vectors";

const encoder = new TextEncoder();

/**
 * One body buffer: its length in bytes and how to write it at `at` of a zeroed output. The body is
 * laid out first and written once into the frame's one allocation: a typed array per buffer (and
 * per padding) was most of a small batch's encoding time.
 */
export interface BodyBuffer {
  length: number;
  write(out: Uint8Array, view: DataView, at: number): void;
}

const EMPTY: BodyBuffer = { length: 0, write: () => undefined };

function copied(array: ArrayBufferView): BodyBuffer {
  return {
    length: array.byteLength,
    write: (out, _view, at) =>
      out.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), at),
  };
}

function bits(flags: ArrayLike<number>): BodyBuffer {
  return {
    length: Math.ceil(flags.length / 8),
    write(out, _view, at) {
      for (let i = 0; i < flags.length; i++) if (flags[i]) out[at + (i >> 3)]! |= 1 << (i & 7);
    },
  };
}

function int64s(values: ArrayLike<number>): BodyBuffer {
  return {
    length: values.length * 8,
    write(_out, view, at) {
      for (let i = 0; i < values.length; i++) setInt64(view, at + 8 * i, values[i]!);
    },
  };
}

/** The buffers and nodes of one record batch body, in Arrow's depth-first order. */
export class Body {
  readonly nodes: Array<[number, number]> = [];
  readonly buffers: BodyBuffer[] = [];

  add(vector: Vector): void {
    const length = lengthOf(vector);
    if (vector.type === "utf8") {
      let nulls = 0;
      const bytes: Uint8Array[] = [];
      const offsets: number[] = [0];
      for (const value of vector.values) {
        if (value === null) nulls++;
        const encoded = value === null ? null : encoder.encode(value);
        if (encoded) bytes.push(encoded);
        offsets.push(offsets.at(-1)! + (encoded?.length ?? 0));
      }
      this.nodes.push([length, nulls]);
      this.buffers.push(
        nulls > 0 ? bits(vector.values.map((v) => (v === null ? 0 : 1))) : EMPTY,
        {
          length: offsets.length * 4,
          write(_out, view, at) {
            for (let i = 0; i < offsets.length; i++) view.setInt32(at + 4 * i, offsets[i]!, true);
          },
        },
        {
          length: offsets.at(-1)!,
          write(out, _view, at) {
            for (const piece of bytes) {
              out.set(piece, at);
              at += piece.length;
            }
          },
        },
      );
      return;
    }
    this.nodes.push([length, 0]);
    if (vector.type === "list") {
      this.buffers.push(EMPTY, copied(vector.offsets));
      this.add(vector.child);
      return;
    }
    this.buffers.push(
      EMPTY,
      vector.type === "bool"
        ? bits(vector.values)
        : vector.type === "int64"
          ? int64s(vector.values)
          : copied(vector.values),
    );
  }
}

/** `n` rounded up to a multiple of 8 (Arrow aligns every body buffer so). */
export const pad8 = (n: number): number => Math.ceil(n / 8) * 8;

/** `value`, a safe integer, as a little-endian int64 at byte `at` (two 32-bit halves, two's complement for negatives). */
function setInt64(view: DataView, at: number, value: number): void {
  if ((value | 0) === value) {
    // Token ids, offsets and lengths are int32s: the high half is the sign.
    view.setInt32(at, value, true);
    view.setInt32(at + 4, value < 0 ? -1 : 0, true);
    return;
  }
  if (!Number.isSafeInteger(value))
    throw new RangeError(`an int64 value must be a safe integer, got ${value}`);
  view.setUint32(at, ((value % 2 ** 32) + 2 ** 32) % 2 ** 32, true);
  view.setInt32(at + 4, Math.floor(value / 2 ** 32), true);
}

/** Node and buffer entries (lengths, counts, offsets) as int64 pairs (written in place: `pairs.flat()` was the costliest step of a small batch). */
export function int64Pairs(pairs: Array<[number, number]>): Uint8Array {
  const view = new DataView(new ArrayBuffer(pairs.length * 16));
  for (let i = 0; i < pairs.length; i++) {
    setInt64(view, 16 * i, pairs[i]![0]);
    setInt64(view, 16 * i + 8, pairs[i]![1]);
  }
  return new Uint8Array(view.buffer);
}
