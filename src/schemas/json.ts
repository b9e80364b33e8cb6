/** @module JSON values as zod describes them. */
import type { z } from "zod";

/** Any JSON-serializable value (what `z.json()` accepts). */
export type JsonValue = z.core.util.JSONType;
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };
