/**
 * @module POSTs to an upstream with failures mapped to ModelError by status only, as `postJson`
 * does, split in two so a stream can be handed over open: `sendUpstream` returns the 2xx
 * response unread, `readUpstreamJson` parses it. Failures are classified by status alone, never by message text.
 */
import { ModelError } from "../../errors";

/** Per-call options of an upstream POST. */
export interface UpstreamOptions {
  apiKey?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Extra headers, e.g. `x-request-id` shared by both legs of a prefill/decode pair. */
  headers?: Record<string, string> | undefined;
}

/** Statuses worth retrying: rate limits and server-side failures. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Pulls `message` out of OpenAI/vLLM error bodies (`{error: {message}}` or `{message}`), else the raw text. */
export function upstreamMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === "object" && typeof parsed.error?.message === "string") return parsed.error.message;
    if (typeof parsed.error === "string") return parsed.error;
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 500);
}

/** A failure before any status was seen: retryable unless the caller aborted (then a 504 timeout). */
function transportError(message: string, signal: AbortSignal | undefined, cause: unknown): ModelError {
  const aborted = signal?.aborted ?? false;
  return new ModelError(message, { retryable: !aborted, timeout: aborted, cause });
}

/**
 * POSTs `body` as JSON and returns the response when it is 2xx, body unread. Throws ModelError:
 * retryable for network errors and 408/429/5xx (with Retry-After), not for other 4xx or aborts.
 */
export async function sendUpstream(fetcher: typeof fetch, url: string, body: unknown, options: UpstreamOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let response: Response;
  try {
    response = await fetcher(url, { method: "POST", headers, body: JSON.stringify(body), signal: options.signal });
  } catch (cause) {
    const message = options.signal?.aborted ? `request to ${url} timed out` : `cannot reach ${url}: ${String(cause)}`;
    throw transportError(message, options.signal, cause);
  }
  if (response.ok) return response;
  let text = "";
  try {
    text = await response.text();
  } catch {
    // The status alone classifies the failure; a lost error body only loses its message.
  }
  // Number(null) and Number("") are 0: an absent header must stay "not said", not "retry now".
  const header = response.headers.get("retry-after")?.trim();
  const retryAfter = header ? Number(header) : Number.NaN;
  throw new ModelError(`upstream ${response.status}: ${upstreamMessage(text)}`, {
    retryable: isRetryableStatus(response.status),
    upstreamStatus: response.status,
    retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null,
  });
}

/** Reads and parses a 2xx response; an unreadable or malformed body is a retryable ModelError. */
export async function readUpstreamJson(response: Response, url: string, signal?: AbortSignal): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (cause) {
    throw transportError(`reading the reply of ${url} failed`, signal, cause);
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ModelError(`upstream sent malformed JSON (${text.length} bytes)`, { retryable: true, upstreamStatus: response.status, cause });
  }
}

/** `sendUpstream` then `readUpstreamJson`: one non-streaming JSON call. */
export async function postUpstreamJson(fetcher: typeof fetch, url: string, body: unknown, options: UpstreamOptions = {}): Promise<unknown> {
  return readUpstreamJson(await sendUpstream(fetcher, url, body, options), url, options.signal);
}
