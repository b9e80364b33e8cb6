/**
 * @module Errors in the Anthropic shape, after https://docs.anthropic.com/en/api/errors:
 * `{"type":"error","error":{"type","message"}}`, the same data in a stream's `event: error`.
 */

/** The `error.type` values this gateway answers with (the API may add more; harnesses read these). */
export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

/** An Anthropic error body. */
export interface AnthropicErrorBody {
  type: "error";
  error: { type: AnthropicErrorType; message: string };
}

/** An error ready to answer: the HTTP status to send and the body. */
export interface AnthropicError {
  status: number;
  body: AnthropicErrorBody;
}

/**
 * The status and type an HTTP status from the gateway is answered with. Harnesses decide whether
 * to retry from the status (the Anthropic SDKs retry 408, 409, 429 and 5xx), so a status is
 * changed only where keeping it would make them retry something that cannot succeed.
 */
function mapStatus(status: number): { status: number; type: AnthropicErrorType } {
  switch (status) {
    case 400: // a malformed body, a call over the rollout's limits
      return { status, type: "invalid_request_error" };
    case 401: // no rollout key, or a wrong one
      return { status, type: "authentication_error" };
    case 403: // a key of another rollout
      return { status, type: "permission_error" };
    case 404: // no such rollout
      return { status, type: "not_found_error" };
    case 409: // the rollout ended or the attempt is no longer live: answered 400 so the SDK does not retry
      return { status: 400, type: "invalid_request_error" };
    case 413: // the body is over the gateway's size limit
      return { status, type: "request_too_large" };
    case 422: // a request the model server refused as unprocessable: the API answers 400 for these
      return { status: 400, type: "invalid_request_error" };
    case 429: // a weight sync in progress (with Retry-After), or the backend's own rate limit
      return { status, type: "rate_limit_error" };
    case 529: // the API's own overload status, kept should a backend send it
      return { status, type: "overloaded_error" };
    default:
      // Other 4xx: the API's reference says it uses invalid_request_error for 4xx it does not list.
      if (status >= 400 && status < 500) return { status, type: "invalid_request_error" };
      // 500 (internal), 502 (the model server failed), 503 (the deployment is misconfigured),
      // 504 (the model server timed out): api_error, not overloaded_error, since none of them is
      // load that waiting would clear. Anything that is not an error status is answered as 500.
      if (status >= 500 && status < 600) return { status, type: "api_error" };
      return { status: 500, type: "api_error" };
  }
}

/**
 * The Anthropic error for a gateway failure with HTTP `status`.
 * @example anthropicError(404, "rollout r1 does not exist")
 * // { status: 404, body: { type: "error", error: { type: "not_found_error", message: "rollout r1 does not exist" } } }
 */
export function anthropicError(status: number, message: string): AnthropicError {
  const mapped = mapStatus(status);
  return { status: mapped.status, body: { type: "error", error: { type: mapped.type, message } } };
}

/**
 * The Anthropic error for anything thrown: an error carrying a numeric `status` and a string
 * `message` (an AppError, a wire error) keeps them; anything else is an opaque 500, its text
 * not shown to the harness.
 */
export function anthropicErrorOf(error: unknown): AnthropicError {
  if (typeof error === "object" && error !== null) {
    const { status, message } = error as { status?: unknown; message?: unknown };
    if (typeof status === "number" && typeof message === "string")
      return anthropicError(status, message);
  }
  return anthropicError(500, "internal error");
}
