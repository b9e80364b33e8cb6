/**
 * @module A Responses body checked against `ResponsesRequest`, a failure raised as OpenAI's 400
 * `invalid_request_error` naming the field, in the API's own wording ("Missing required
 * parameter: 'input[2].call_id'.").
 */
import type { z } from "zod";
import { paramPath, ResponsesRequestError } from "./openai-error";
import { ResponsesRequest } from "./request-schema";

type Issue = z.core.$ZodIssue;

/**
 * The issue to report: inside a union, the branch that got furthest (its first issue with the
 * longest path), so a function tool missing its `name` says `tools[0].name`, not `tools[0]`.
 */
function deepestIssue(issue: Issue): Issue {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue;
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first && (!best || first.path.length > best.path.length)) best = first;
  }
  if (!best || best.path.length === 0) return issue;
  const inner = deepestIssue(best);
  return { ...inner, path: [...issue.path, ...inner.path] };
}

/** The value at `path` inside `body`, or undefined where the path leaves it. */
function valueAt(body: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = body;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * `body` as a Responses request, or a `ResponsesRequestError` (400) whose message and `param` name
 * the first bad field.
 * @example parseResponsesRequest({ model: "m", input: "hi" }).input // "hi"
 */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new ResponsesRequestError("The request body must be a JSON object.", null);
  const parsed = ResponsesRequest.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = deepestIssue(parsed.error.issues[0]!);
  const param = paramPath(issue.path);
  const missing = issue.code === "invalid_type" && valueAt(body, issue.path) === undefined;
  const message = missing
    ? `Missing required parameter: '${param}'.`
    : `Invalid '${param}': ${issue.message}`;
  throw new ResponsesRequestError(message, param === "" ? null : param);
}
