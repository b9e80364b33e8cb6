/** @module A minimal FlatBuffers reader for Arrow IPC message headers: tables, vectors, strings. */

const decoder = new TextDecoder();

/** One table inside a FlatBuffer, read field by field (absent fields give the caller's default). */
export class FbReader {
  readonly #view: DataView;
  readonly #bytes: Uint8Array;
  readonly pos: number;

  constructor(bytes: Uint8Array, pos: number) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = pos;
  }

  /** The root table of a FlatBuffer. */
  static root(bytes: Uint8Array): FbReader {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return new FbReader(bytes, view.getUint32(0, true));
  }

  /** Absolute position of field `slot`, or 0 when absent. */
  #field(slot: number): number {
    const vtable = this.pos - this.#view.getInt32(this.pos, true);
    const size = this.#view.getUint16(vtable, true);
    if (4 + 2 * slot >= size) return 0;
    const offset = this.#view.getUint16(vtable + 4 + 2 * slot, true);
    return offset === 0 ? 0 : this.pos + offset;
  }

  #target(at: number): number {
    return at + this.#view.getUint32(at, true);
  }

  u8(slot: number, fallback = 0): number {
    const at = this.#field(slot);
    return at ? this.#view.getUint8(at) : fallback;
  }

  i16(slot: number, fallback = 0): number {
    const at = this.#field(slot);
    return at ? this.#view.getInt16(at, true) : fallback;
  }

  i32(slot: number, fallback = 0): number {
    const at = this.#field(slot);
    return at ? this.#view.getInt32(at, true) : fallback;
  }

  i64(slot: number, fallback = 0): number {
    const at = this.#field(slot);
    return at ? Number(this.#view.getBigInt64(at, true)) : fallback;
  }

  string(slot: number): string | undefined {
    const at = this.#field(slot);
    if (!at) return undefined;
    const start = this.#target(at);
    const length = this.#view.getUint32(start, true);
    return decoder.decode(this.#bytes.subarray(start + 4, start + 4 + length));
  }

  table(slot: number): FbReader | undefined {
    const at = this.#field(slot);
    return at ? new FbReader(this.#bytes, this.#target(at)) : undefined;
  }

  tables(slot: number): FbReader[] {
    const at = this.#field(slot);
    if (!at) return [];
    const start = this.#target(at);
    const length = this.#view.getUint32(start, true);
    return Array.from(
      { length },
      (_, i) => new FbReader(this.#bytes, this.#target(start + 4 + 4 * i)),
    );
  }

  /** A vector of structs of two int64s each (Arrow's FieldNode and Buffer), as pairs. */
  int64Pairs(slot: number): Array<[number, number]> {
    const at = this.#field(slot);
    if (!at) return [];
    const start = this.#target(at);
    const length = this.#view.getUint32(start, true);
    return Array.from({ length }, (_, i) => [
      Number(this.#view.getBigInt64(start + 4 + 16 * i, true)),
      Number(this.#view.getBigInt64(start + 12 + 16 * i, true)),
    ]);
  }
}
