/** @module JSON values as zod describes them. */
import type { z } from "zod";

/** Any JSON-serializable value (what `z.json()` accepts). */
export type JsonValue = z.core.util.JSONType;
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Deepest nesting any JSON value may have, anywhere (free-form fields included). Recursive code
 * (zod's `z.json()`, structured clone across RPC, JSON.stringify) overflows the stack around a few
 * thousand levels; no real payload comes near 64.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The deepest `[`/`{` nesting in JSON `text`, found by one linear scan that skips strings, so it
 * never recurses and can run before `JSON.parse`. Stops counting once past `stopAbove`.
 */
export function jsonNestingDepth(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i++; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x5b || code === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
  return deepest;
}
