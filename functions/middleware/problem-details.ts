/** @module RFC 9457 problem+json responses for every error the API returns. */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { AppError, InvalidInputError, PayloadTooLargeError, PolicySyncingError } from "../../src/errors";
import { jsonNestingDepth, MAX_JSON_DEPTH } from "../../src/schemas/json";

/** One field-level problem: where (dot path) and what. */
export interface FieldProblem {
  path: string;
  message: string;
}

/** Turns zod issues into field problems with dot paths (`task.problem`, `config.max_steps`). */
export function fieldProblems(error: z.ZodError): FieldProblem[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String).join(".") || "(body)", message: issue.message }));
}

/** Builds the problem+json response for `error`; unknown errors become an opaque 500. */
export function problemResponse(c: Context, error: unknown): Response {
  const appError = error instanceof AppError ? error : null;
  const status = (appError?.status ?? 500) as ContentfulStatusCode;
  const code = appError?.code ?? "internal";
  if (!appError) console.error("unhandled error", error);
  const body: Record<string, unknown> = {
    type: `urn:edge-rollout:problem:${code}`,
    title: appError?.name ?? "InternalError",
    status,
    detail: appError ? appError.message : "internal error",
    instance: new URL(c.req.url).pathname,
  };
  if (appError?.details !== undefined) body.errors = appError.details;
  // OpenAI-compatible clients (on the rollout gateway) read `error.message`; problem+json readers ignore it.
  body.error = { message: body.detail, type: code, code: status };
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (error instanceof PolicySyncingError) headers["retry-after"] = String(error.retryAfterSeconds);
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

/** The body as text, refused with 413 before reading when Content-Length says it is too large. */
async function boundedBodyText(c: Context, maxBytes: number): Promise<string> {
  const declared = Number(c.req.header("content-length") ?? "");
  const tooLarge = (size: number) => new PayloadTooLargeError(`request body is ${size} bytes; this route accepts at most ${maxBytes}`, maxBytes);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(declared);
  const text = await c.req.text();
  // UTF-16 length is a lower bound of the UTF-8 size; count bytes only when it could matter.
  if (text.length > maxBytes / 3) {
    const bytes = new TextEncoder().encode(text).byteLength;
    if (bytes > maxBytes) throw tooLarge(bytes);
  }
  return text;
}

/**
 * Parses the request's JSON body with `schema`: too large is a 413, nested deeper than
 * MAX_JSON_DEPTH or malformed JSON a 400 (checked before parsing, so nothing recurses on it),
 * schema violations a 422 naming each field.
 */
export async function parseJsonBody<S extends z.ZodType>(c: Context, schema: S, options: JsonBodyOptions = {}): Promise<z.infer<S>> {
  const text = await boundedBodyText(c, options.maxBytes ?? MAX_JSON_BODY_BYTES);
  if (options.emptyAsObject && text.trim() === "") return parseWith(schema, {});
  if (jsonNestingDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new InvalidInputError(`request body nests deeper than ${MAX_JSON_DEPTH} levels`, { status: 400, details: [{ path: "(body)", message: `nested deeper than ${MAX_JSON_DEPTH} levels` }] });
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
    throw new InvalidInputError(problems.map((p) => `${p.path}: ${p.message}`).join("; "), { status: 422, details: problems });
  }
  return parsed.data;
}

/** Parses query parameters with `schema`: a violation is a 400 naming each parameter. */
export function parseQuery<S extends z.ZodType>(raw: Record<string, string>, schema: S): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const problems = fieldProblems(parsed.error);
    throw new InvalidInputError(problems.map((p) => `${p.path}: ${p.message}`).join("; "), { status: 400, details: problems });
  }
  return parsed.data;
}
