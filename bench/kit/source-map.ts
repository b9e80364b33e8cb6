/**
 * @module Reading an esbuild source map (v3) just far enough to tell which source file a bundled
 * line and column came from: how CPU profile frames of the one-file Worker bundle are attributed
 * back to `src/…`, `functions/…` and `durable-objects/…`.
 */
import { readFileSync } from "node:fs";

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...BASE64].map((char, i) => [char, i]));

/** Generated position → source file, for one bundle. */
export interface SourceLookup {
  /** The source path (as the map names it) of 0-based `line`, `column` of the bundle, or null. */
  sourceAt(line: number, column: number): string | null;
}

/** Decodes one VLQ-encoded segment into its fields. */
function decodeSegment(segment: string): number[] {
  const fields: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = DIGIT.get(char);
    if (digit === undefined) throw new Error(`bad source map character ${char}`);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return fields;
}

/** Loads `mapPath` (a `.js.map` next to the bundle). */
export function loadSourceMap(mapPath: string): SourceLookup {
  const map = JSON.parse(readFileSync(mapPath, "utf8")) as { sources: string[]; mappings: string };
  // Per generated line: [column, source index] pairs in column order.
  const lines: Array<Array<[number, number]>> = [];
  let source = 0;
  for (const line of map.mappings.split(";")) {
    const segments: Array<[number, number]> = [];
    let column = 0;
    for (const segment of line.split(",")) {
      if (segment === "") continue;
      const fields = decodeSegment(segment);
      column += fields[0]!;
      if (fields.length >= 4) {
        source += fields[1]!;
        segments.push([column, source]);
      }
    }
    lines.push(segments);
  }
  return {
    sourceAt(line, column) {
      const segments = lines[line];
      if (!segments || segments.length === 0) return null;
      let found = segments[0]!;
      for (const segment of segments) {
        if (segment[0] > column) break;
        found = segment;
      }
      return map.sources[found[1]] ?? null;
    },
  };
}
