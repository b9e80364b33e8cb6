/**
 * @module POSTs to an upstream with failures mapped to ModelError by status only, as `postJson`
 * does, in two forms: `postUpstreamJson` reads and parses the reply, `sendUpstream` hands a
 * stream over open. Failures are classified by status alone, never
 * by message text. Each attempt may carry its own deadline (`timeoutMs`), so a hung connection
 * fails that attempt (retryable) instead of the caller's whole budget.
 */
import { ModelError } from "../../errors";
import { startAttemptDeadline } from "./attempt-deadline";
import { withFirstChunk } from "./first-chunk";

/** Per-call options of an upstream POST. */
export interface UpstreamOptions {
  apiKey?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Extra headers, e.g. `x-request-id` shared by both legs of a prefill/decode pair. */
  headers?: Record<string, string> | undefined;
  /**
   * This attempt's deadline: until the whole JSON reply is read (`postUpstreamJson`) or until the
   * response headers and first body chunk arrived (`sendUpstream` of a stream). Absent: none.
   */
  timeoutMs?: number | undefined;
}

/** Statuses worth retrying: rate limits and server-side failures. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The status the gateway answers for an upstream refusal of the request itself: vLLM's 400 (bad
 * parameters, prompt over the context window), 413 and 422 are the caller's to fix and go back
 * as they came. Other 4xx (401/403 for the deployment's own key, 404 for a model the policy
 * names) are the deployment's fault and stay 502.
 */
export function clientStatusFor(status: number): 400 | 413 | 422 | undefined {
  return status === 400 || status === 413 || status === 422 ? status : undefined;
}

/** Pulls `message` out of OpenAI/vLLM error bodies (`{error: {message}}` or `{message}`), else the raw text. */
export function upstreamMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as {
      error?: { message?: unknown } | string;
      message?: unknown;
    };
    if (typeof parsed.error === "object" && typeof parsed.error?.message === "string")
      return parsed.error.message;
    if (typeof parsed.error === "string") return parsed.error;
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 500);
}

/**
 * A failure before any status was seen. The caller's own abort is final (a 504 timeout); the
 * attempt's deadline passing is a 504 too, but retryable: the next attempt gets a fresh connection.
 */
function transportError(
  message: string,
  caller: AbortSignal | undefined,
  attemptTimedOut: boolean,
  cause: unknown,
): ModelError {
  if (caller?.aborted) return new ModelError(message, { retryable: false, timeout: true, cause });
  return new ModelError(message, { retryable: true, timeout: attemptTimedOut, cause });
}

async function fail(response: Response): Promise<never> {
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
    clientStatus: clientStatusFor(response.status),
    retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null,
  });
}

/** Parses a read body; malformed JSON is a retryable ModelError. */
function parseReply(text: string, status: number): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ModelError(`upstream sent malformed JSON (${text.length} bytes)`, {
      retryable: true,
      upstreamStatus: status,
      cause,
    });
  }
}

/**
 * POSTs `body` as JSON and returns the response when it is 2xx, body unread except for its first
 * chunk, which the returned body still starts with (the deadline covers headers and first byte).
 * Throws ModelError: retryable for network errors, a passed deadline and 408/429/5xx (with
 * Retry-After), not for other 4xx or the caller's abort.
 */
export async function sendUpstream(
  fetcher: typeof fetch,
  url: string,
  body: unknown,
  options: UpstreamOptions = {},
): Promise<Response> {
  const deadline = startAttemptDeadline(options.signal, options.timeoutMs);
  try {
    const response = await fetchUpstream(
      fetcher,
      url,
      body,
      options,
      deadline.signal,
      () => deadline.timedOut,
    );
    if (!response.ok) return await fail(response);
    if (options.timeoutMs === undefined) return response;
    return await withFirstChunk(response).catch((cause: unknown) => {
      throw transportError(
        deadline.timedOut
          ? `no first byte from ${url} within ${options.timeoutMs} ms`
          : `reading the reply of ${url} failed`,
        options.signal,
        deadline.timedOut,
        cause,
      );
    });
  } finally {
    // The stream, once started, belongs to the caller: only their signal may cut it now.
    deadline.settle();
  }
}

/** One non-streaming JSON call, the whole reply within `timeoutMs` when given. */
export async function postUpstreamJson(
  fetcher: typeof fetch,
  url: string,
  body: unknown,
  options: UpstreamOptions = {},
): Promise<unknown> {
  return (await postUpstreamReply(fetcher, url, body, options)).body;
}

/**
 * `postUpstreamJson` that also returns the reply's text as received, so a caller that passes the
 * reply on unchanged sends those bytes instead of serializing the parsed body again (a reply
 * carries every prompt token id and logprob: stringifying it was a measured share of a
 * gateway call's CPU).
 */
export async function postUpstreamReply(
  fetcher: typeof fetch,
  url: string,
  body: unknown,
  options: UpstreamOptions = {},
): Promise<{ body: unknown; text: string }> {
  const deadline = startAttemptDeadline(options.signal, options.timeoutMs);
  try {
    const response = await fetchUpstream(
      fetcher,
      url,
      body,
      options,
      deadline.signal,
      () => deadline.timedOut,
    );
    if (!response.ok) return await fail(response);
    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      const message = deadline.timedOut
        ? `no reply from ${url} within ${options.timeoutMs} ms`
        : `reading the reply of ${url} failed`;
      throw transportError(message, options.signal, deadline.timedOut, cause);
    }
    return { body: parseReply(text, response.status), text };
  } finally {
    deadline.settle();
  }
}

async function fetchUpstream(
  fetcher: typeof fetch,
  url: string,
  body: unknown,
  options: UpstreamOptions,
  signal: AbortSignal | undefined,
  timedOut: () => boolean,
): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...options.headers,
  };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  try {
    return await fetcher(url, { method: "POST", headers, body: JSON.stringify(body), signal });
  } catch (cause) {
    const message = timedOut()
      ? `no reply from ${url} within ${options.timeoutMs} ms`
      : options.signal?.aborted
        ? `request to ${url} timed out`
        : `cannot reach ${url}: ${String(cause)}`;
    throw transportError(message, options.signal, timedOut(), cause);
  }
}
