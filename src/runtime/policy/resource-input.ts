/** @module Checks on a resource before it is stored: its name and its JSON value. */
import { ResourceName } from "../../schemas/policy";
import type { FieldIssue } from "./policy-results";

/**
 * Largest stored JSON text of one resource version. A Durable Object's SQLite refuses values over
 * 2 MB; the margin leaves room for the row's other columns.
 */
export const MAX_RESOURCE_BYTES = 1_900_000;

const encoder = new TextEncoder();

/** The value serialized for storage, or the field that is wrong. */
export type ResourceInput =
  { ok: true; json: string } | { ok: false; reason: "invalid"; errors: FieldIssue[] };

/** Validates a resource name and value; `errors[].path` is `name` or `value`. */
export function validateResource(name: unknown, value: unknown): ResourceInput {
  const named = ResourceName.safeParse(name);
  if (!named.success)
    return {
      ok: false,
      reason: "invalid",
      errors: [{ path: "name", message: named.error.issues[0]?.message ?? "invalid name" }],
    };
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  if (json === undefined)
    return {
      ok: false,
      reason: "invalid",
      errors: [{ path: "value", message: "value must be JSON" }],
    };
  const bytes = encoder.encode(json).byteLength;
  if (bytes > MAX_RESOURCE_BYTES)
    return {
      ok: false,
      reason: "invalid",
      errors: [
        {
          path: "value",
          message: `value is ${bytes} bytes as JSON; the limit is ${MAX_RESOURCE_BYTES}`,
        },
      ],
    };
  return { ok: true, json };
}
