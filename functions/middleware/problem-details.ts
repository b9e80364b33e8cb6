/** @module RFC 9457 problem+json responses for every error the API returns. */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import {
  RateLimitedError,
  AppError,
  InvalidInputError,
  PayloadTooLargeError,
  PolicySyncingError,
} from "../../src/errors";
import { jsonNestingDepth, MAX_JSON_DEPTH } from "../../src/schemas/json";

/** One field-level problem: where (dot path) and what. */
export interface FieldProblem {
  path: string;
  message: string;
}

/**
 * Turns zod issues into field problems with dot paths (`task.problem`, `config.max_steps`). An
 * unknown field is named by its own path (`config.max_stpes`), one problem each, where zod puts
 * the issue on the object that holds it (`(body)` for a misspelt top-level field).
 */
export function fieldProblems(error: z.ZodError): FieldProblem[] {
  const dotted = (path: readonly PropertyKey[]) => path.map(String).join(".") || "(body)";
  return error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({
          path: dotted([...issue.path, key]),
          message: `unknown field "${key}"`,
        }))
      : [{ path: dotted(issue.path), message: issue.message }],
  );
}

/** Builds the problem+json response for `error`; unknown errors become an opaque 500. */
export function problemResponse(c: Context, error: unknown): Response {
  const appError = error instanceof AppError ? error : null;
  // The runtime marks an object's transient failures `retryable` (a Durable Object reset by a
  // deploy, an overloaded object): 503, asked again, never an opaque 500.
  const transient = !appError && (error as { retryable?: unknown } | null)?.retryable === true;
  const status = (appError?.status ?? (transient ? 503 : 500)) as ContentfulStatusCode;
  const code = appError?.code ?? (transient ? "unavailable" : "internal");
  if (!appError) console.error("unhandled error", error);
  const body: Record<string, unknown> = {
    type: `urn:edge-rollout:problem:${code}`,
    title: appError?.name ?? (transient ? "ServiceUnavailable" : "InternalError"),
    status,
    detail: appError
      ? appError.message
      : transient
        ? "the object serving this request restarted; try again"
        : "internal error",
    instance: new URL(c.req.url).pathname,
  };
  if (appError?.details !== undefined) body.errors = appError.details;
  // OpenAI-compatible clients (on the rollout gateway) read `error.message`; problem+json readers ignore it.
  body.error = { message: body.detail, type: code, code: status };
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (error instanceof PolicySyncingError || error instanceof RateLimitedError)
    headers["retry-after"] = String(error.retryAfterSeconds);
  if (transient) {
    headers["retry-after"] = "1";
    headers["x-should-retry"] = "true";
  }
  // RFC 9110 §15.5.2: a 401 must carry a challenge, or clients cannot tell which scheme to use.
  if (status === 401) headers["www-authenticate"] = 'Bearer realm="edge-rollout"';
  return c.body(JSON.stringify(body), status, headers);
}

/**
 * Default largest JSON body, in bytes. What a body carries ends up stored in one Durable Object
 * SQLite value (a task, a span, a final conversation), and SQLite values are capped at about
 * 2 MB; 1 MiB leaves room for the fields stored alongside. Routes that take more say so.
 */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** How a route's body is read. */
export interface JsonBodyOptions {
  /** Largest body in bytes (default MAX_JSON_BODY_BYTES); larger is a 413. */
  maxBytes?: number;
  /** An empty body parses as `{}` (every field optional). Default false. */
  emptyAsObject?: boolean;
}

/**
 * How much of a refused body is read and thrown away before the 413 goes out (32 MiB). Answering
 * while the client is still sending makes the server close the connection under it, and the
 * client sees a reset instead of its 413; past this much, a reset is the lesser cost.
 */
export const MAX_DISCARDED_BODY_BYTES = 32 * 1024 * 1024;

/** Reads and drops the rest of `reader`, up to MAX_DISCARDED_BODY_BYTES in all (`read` so far). */
async function discardRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  read: number,
): Promise<void> {
  for (let total = read; total <= MAX_DISCARDED_BODY_BYTES;) {
    const { done, value } = await reader.read();
    if (done) return;
    total += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
}

/**
 * The body as text, at most `maxBytes` of UTF-8: a larger one is a 413, known from Content-Length
 * before reading or found while reading (chunked bodies), and answered only after the rest was
 * read and dropped (bounded), so the client gets its 413 rather than a reset connection.
 */
async function boundedBodyText(c: Context, maxBytes: number): Promise<string> {
  const declared = Number(c.req.header("content-length") ?? "");
  const tooLarge = (size: string) =>
    new PayloadTooLargeError(
      `request body is ${size} bytes; this route accepts at most ${maxBytes}`,
      maxBytes,
    );
  const body = c.req.raw.body;
  if (!body) return "";
  if (c.req.raw.bodyUsed) {
    // Read before (Hono caches what it read): only the size is left to check.
    const text = await c.req.text();
    const bytes = new TextEncoder().encode(text).byteLength;
    if (bytes > maxBytes) throw tooLarge(String(bytes));
    return text;
  }
  const reader = body.getReader();
  if (Number.isFinite(declared) && declared > maxBytes) {
    await discardRest(reader, 0);
    throw tooLarge(String(declared));
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await discardRest(reader, size);
      throw tooLarge(`more than ${maxBytes}`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * Parses the request's JSON body with `schema`: too large is a 413, nested deeper than
 * MAX_JSON_DEPTH or malformed JSON a 400 (checked before parsing, so nothing recurses on it),
 * schema violations a 422 naming each field.
 */
export async function parseJsonBody<S extends z.ZodType>(
  c: Context,
  schema: S,
  options: JsonBodyOptions = {},
): Promise<z.infer<S>> {
  const text = await boundedBodyText(c, options.maxBytes ?? MAX_JSON_BODY_BYTES);
  if (options.emptyAsObject && text.trim() === "") return parseWith(schema, {});
  if (jsonNestingDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new InvalidInputError(`request body nests deeper than ${MAX_JSON_DEPTH} levels`, {
      status: 400,
      details: [{ path: "(body)", message: `nested deeper than ${MAX_JSON_DEPTH} levels` }],
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InvalidInputError("request body is not valid JSON", { status: 400 });
  }
  return parseWith(schema, raw);
}

function parseWith<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = fieldProblems(parsed.error);
    throw new InvalidInputError(problems.map((p) => `${p.path}: ${p.message}`).join("; "), {
      status: 422,
      details: problems,
    });
  }
  return parsed.data;
}

/** Parses query parameters with `schema`: a violation is a 400 naming each parameter. */
export function parseQuery<S extends z.ZodType>(
  raw: Record<string, string>,
  schema: S,
): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = fieldProblems(parsed.error);
    throw new InvalidInputError(problems.map((p) => `${p.path}: ${p.message}`).join("; "), {
      status: 400,
      details: problems,
    });
  }
  return parsed.data;
}
