/** @module The columns the Arrow codec reads and writes, held as flat typed arrays. */

/**
 * One column's values. `int64` values are held as (safe-integer) numbers; `bool` one byte per
 * value (packed to bits on the wire); `utf8` strings may be null; a `list` is Arrow's ragged
 * layout: `offsets` (length + 1 entries) into one flat `child`.
 */
export type Vector =
  | { type: "int32"; values: Int32Array }
  | { type: "int64"; values: Float64Array }
  | { type: "float32"; values: Float32Array }
  | { type: "float64"; values: Float64Array }
  | { type: "bool"; values: Uint8Array }
  | { type: "utf8"; values: Array<string | null> }
  | { type: "list"; offsets: Int32Array; child: Vector };

/** A named column. */
export interface Column {
  name: string;
  vector: Vector;
}

/** How many values a vector holds. */
export function lengthOf(vector: Vector): number {
  return vector.type === "list" ? vector.offsets.length - 1 : vector.values.length;
}

type NumericType = "int32" | "int64" | "float32" | "float64";

function numericArray(type: NumericType, length: number): Int32Array | Float32Array | Float64Array {
  return type === "int32"
    ? new Int32Array(length)
    : type === "float32"
      ? new Float32Array(length)
      : new Float64Array(length);
}

const WIDER: Record<string, NumericType | undefined> = {
  "int32+int64": "int64",
  "int64+int32": "int64",
  "float32+float64": "float64",
  "float64+float32": "float64",
};

/** The type both `a` and `b` fit in without loss (int32 → int64, float32 → float64). */
function widened(a: Vector["type"], b: Vector["type"]): Vector["type"] {
  if (a === b) return a;
  const wider = WIDER[`${a}+${b}`];
  if (!wider) throw new TypeError(`cannot concatenate ${a} and ${b} columns`);
  return wider;
}

/**
 * One vector holding `parts` back to back (list offsets rebased, numbers widened to the widest
 * part's type). Numeric values are copied with `TypedArray.set`, never one by one.
 */
export function concatVectors(parts: Vector[], emptyAs: Vector): Vector {
  if (parts.length === 0) return emptyAs;
  const type = parts.map((p) => p.type).reduce(widened);
  if (type === "list") {
    const lists = parts as Array<Extract<Vector, { type: "list" }>>;
    const total = lists.reduce((n, p) => n + p.offsets.length - 1, 0);
    const offsets = new Int32Array(total + 1);
    let row = 0;
    let base = 0;
    for (const part of lists) {
      const first = part.offsets[0]!;
      for (let i = 1; i < part.offsets.length; i++)
        offsets[row + i] = base + part.offsets[i]! - first;
      row += part.offsets.length - 1;
      base = offsets[row]!;
    }
    const children = lists.map((p) =>
      sliceVector(p.child, p.offsets[0]!, p.offsets[p.offsets.length - 1]!),
    );
    return {
      type: "list",
      offsets,
      child: concatVectors(children, (emptyAs as Extract<Vector, { type: "list" }>).child),
    };
  }
  if (type === "utf8")
    return { type, values: parts.flatMap((p) => (p as Extract<Vector, { type: "utf8" }>).values) };
  const total = parts.reduce((n, p) => n + lengthOf(p), 0);
  const out = type === "bool" ? new Uint8Array(total) : numericArray(type, total);
  let at = 0;
  for (const part of parts) {
    const values = (part as { values: Int32Array | Float32Array | Float64Array | Uint8Array })
      .values;
    out.set(values, at);
    at += values.length;
  }
  return { type, values: out } as Vector;
}

/** Values `start` (inclusive) to `end` (exclusive) of a flat (non-list) vector, sharing memory where typed. */
export function sliceVector(vector: Vector, start: number, end: number): Vector {
  if (vector.type === "list") throw new TypeError("sliceVector takes a flat vector");
  if (vector.type === "utf8") return { type: "utf8", values: vector.values.slice(start, end) };
  return { type: vector.type, values: vector.values.subarray(start, end) } as Vector;
}
