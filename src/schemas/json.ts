/** @module JSON values as zod describes them, and the schemas that check them. */
import { z } from "zod";

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

/** Where inside a value it stops being JSON, and why. */
interface JsonFault {
  path: Array<string | number>;
  message: string;
}

/** An object made by a literal or `JSON.parse` (or with no prototype), as `z.record` requires: not an array, a Date, a class instance. */
function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The first place `value` is not JSON as `z.json()` defines it (a string, a finite number, a
 * boolean, null, an array or a plain object of such), or null when it all is. `z.json()` is a
 * recursive union: zod tried each member in turn, building an issue for each miss at every node,
 * and a value that failed deep inside was reported as one opaque union failure at the field. One
 * walk allocates only on a fault and says where it is.
 */
function jsonFault(value: unknown): JsonFault | null {
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : { path: [], message: `${value} is not a JSON number` };
    case "object": {
      if (value === null) return null;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const fault = jsonFault(value[i]);
          if (fault) return { path: [i, ...fault.path], message: fault.message };
        }
        return null;
      }
      if (!isPlainObject(value))
        return { path: [], message: "expected a JSON value, got a non-plain object" };
      for (const key in value) {
        const fault = jsonFault((value as Record<string, unknown>)[key]);
        if (fault) return { path: [key, ...fault.path], message: fault.message };
      }
      return null;
    }
    default:
      return { path: [], message: `expected a JSON value, got ${typeof value}` };
  }
}

function reportJsonFault(value: unknown, ctx: z.RefinementCtx): void {
  const fault = jsonFault(value);
  if (fault)
    ctx.addIssue({ code: "custom", path: fault.path, message: fault.message, input: value });
}

/** Any JSON value: what `z.json()` accepts, checked in one walk; an issue's path points inside the value. */
export const JsonValue: z.ZodType<JsonValue, JsonValue> = z
  .custom<JsonValue>()
  .superRefine(reportJsonFault);

/** A JSON object (what `z.record(z.string(), z.json())` accepts), checked the same way. */
export const JsonObject: z.ZodType<JsonObject, JsonObject> = z
  .custom<JsonObject>(
    (value) => typeof value === "object" && value !== null && isPlainObject(value),
    "expected a JSON object",
  )
  .superRefine(reportJsonFault);
