/**
 * @module Checking a Messages or count_tokens body, answering a bad one as the real API does: 400
 * `invalid_request_error` whose message starts with the field's path, e.g.
 * `messages.3.content.0.tool_use_id: Field required` (the API's own wording for a missing field).
 */
import type { z } from "zod";
import { anthropicError, type AnthropicError } from "./anthropic-error";
import { MessagesCountTokensRequest, MessagesRequest } from "./messages-request";

/** A body checked: the request, or the error to answer. */
export type ParsedRequest<T> = { ok: true; request: T } | { ok: false; error: AnthropicError };

/** How many issues one error message lists (the API names one; a few help a harness author). */
const MAX_ISSUES = 3;

/** Zod's message for a field that is absent, worded as the API words it. */
function fieldRequired(issue: { code: string; input?: unknown }): string | undefined {
  return issue.code === "invalid_type" && issue.input === undefined ? "Field required" : undefined;
}

/**
 * The issue to report for `issue`, with its full path. A union (`content`: a string or a block
 * list) fails as one opaque issue at the union; when every member but one failed only because
 * the value has another type, that member's own issue is the one that says what is wrong, deeper.
 */
function innermost(
  issue: z.core.$ZodIssue,
  path: PropertyKey[],
): { path: PropertyKey[]; message: string } {
  const here = [...path, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const relevant = issue.errors.filter(
      (branch) =>
        !(branch.length === 1 && branch[0]?.code === "invalid_type" && branch[0].path.length === 0),
    );
    const only = relevant.length === 1 ? relevant[0]?.[0] : undefined;
    if (only) return innermost(only, here);
  }
  return { path: here, message: issue.message };
}

/** `error`'s issues as one line: `path: message; path: message`. */
function describe(error: z.ZodError): string {
  return error.issues
    .slice(0, MAX_ISSUES)
    .map((issue) => {
      const { path, message } = innermost(issue, []);
      return path.length > 0 ? `${path.map(String).join(".")}: ${message}` : message;
    })
    .join("; ");
}

function parseWith<T>(schema: z.ZodType<T>, body: unknown): ParsedRequest<T> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { ok: false, error: anthropicError(400, "request body must be a JSON object") };
  const parsed = schema.safeParse(body, { error: fieldRequired });
  if (parsed.success) return { ok: true, request: parsed.data };
  return { ok: false, error: anthropicError(400, describe(parsed.error)) };
}

/**
 * Checks a `POST /v1/messages` body (already JSON-parsed).
 * @example
 * const parsed = parseMessagesRequest(await request.json());
 * if (!parsed.ok) return Response.json(parsed.error.body, { status: parsed.error.status });
 */
export function parseMessagesRequest(body: unknown): ParsedRequest<MessagesRequest> {
  return parseWith(MessagesRequest, body);
}

/** Checks a `POST /v1/messages/count_tokens` body (already JSON-parsed). */
export function parseMessagesCountTokensRequest(
  body: unknown,
): ParsedRequest<MessagesCountTokensRequest> {
  return parseWith(MessagesCountTokensRequest, body);
}
