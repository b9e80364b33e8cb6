/**
 * @module OpenAI's error shape, `{"error":{"message","type","param","code"}}`, as the Responses API
 * answers it (https://platform.openai.com/docs/guides/error-codes), and the error a malformed
 * Responses body raises. Harnesses built on OpenAI's SDKs read `type` and `code` to decide what to
 * retry (Codex retries `rate_limit_exceeded` and 5xx, and gives up on `invalid_request_error`), so
 * the pairs below are the ones the real API sends for each status.
 */

/** The body of an OpenAI error answer. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** An OpenAI error answer: the HTTP status and its body. */
export interface OpenAiErrorResponse {
  status: number;
  body: OpenAiErrorBody;
}

/** The `type` and default `code` OpenAI's API sends with each status. */
function typeAndCode(status: number): { type: string; code: string | null } {
  if (status === 401) return { type: "invalid_request_error", code: "invalid_api_key" };
  if (status === 429) return { type: "requests", code: "rate_limit_exceeded" };
  if (status >= 500) return { type: "server_error", code: null };
  return { type: "invalid_request_error", code: null };
}

/**
 * An OpenAI-shaped error answer for `status`: 400/403/404/409/413/422 `invalid_request_error`,
 * 401 `invalid_request_error` with code `invalid_api_key`, 429 type `requests` with code
 * `rate_limit_exceeded`, 5xx `server_error`. `code` overrides the default code.
 * @example openaiError(400, "Missing required parameter: 'input'.", "input")
 */
export function openaiError(
  status: number,
  message: string,
  param?: string | null,
  code?: string | null,
): OpenAiErrorResponse {
  const defaults = typeAndCode(status);
  return {
    status,
    body: {
      error: {
        message,
        type: defaults.type,
        param: param ?? null,
        code: code === undefined ? defaults.code : code,
      },
    },
  };
}

/**
 * A Responses request the gateway refuses (400 `invalid_request_error`): a malformed body, or a
 * field that needs server-side state the gateway does not keep. `param` is the field path, as
 * OpenAI writes it (`input[3].call_id`).
 */
export class ResponsesRequestError extends Error {
  override readonly name = "ResponsesRequestError";
  readonly status = 400;
  readonly param: string | null;
  constructor(message: string, param: string | null) {
    super(message);
    this.param = param;
  }

  /** This error as OpenAI's error answer. */
  toResponse(): OpenAiErrorResponse {
    return openaiError(this.status, this.message, this.param);
  }
}

/** A zod issue path written as OpenAI writes params: `input[3].content[0].text`. */
export function paramPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}
