/** @module RFC 9457 problem+json responses for every error the API returns. */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { AppError, InvalidInputError, PolicySyncingError } from "../../src/errors";

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

/** Parses the request's JSON body with `schema`: malformed JSON is a 400, schema violations a 422 naming each field. */
export async function parseJsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let raw: unknown;
  try {
    raw = JSON.parse(await c.req.text());
  } catch {
    throw new InvalidInputError("request body is not valid JSON", { status: 400 });
  }
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
