/** @module One JSON POST to an upstream, with failures mapped to ModelError by status only. */
import { ModelError } from "../errors";

/** Statuses worth retrying: rate limits and server-side failures. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Pulls `message` out of OpenAI/vLLM error bodies (`{error: {message}}` or `{message}`), else the raw text. */
function upstreamMessage(text: string): string {
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

/**
 * POSTs `body` as JSON and returns the parsed reply. Throws `ModelError`: retryable for network
 * errors, 408/429/5xx and unparseable bodies; not retryable for other 4xx and for aborts.
 */
export async function postJson(
  fetcher: typeof fetch,
  url: string,
  body: unknown,
  options: { apiKey?: string | undefined; signal?: AbortSignal | undefined },
): Promise<unknown> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let response: Response;
  try {
    response = await fetcher(url, { method: "POST", headers, body: JSON.stringify(body), signal: options.signal });
  } catch (cause) {
    const aborted = options.signal?.aborted ?? false;
    throw new ModelError(aborted ? `request to ${url} timed out` : `cannot reach ${url}: ${String(cause)}`, {
      retryable: !aborted,
      timeout: aborted,
      cause,
    });
  }
  let text: string;
  try {
    text = await response.text();
  } catch (cause) {
    const aborted = options.signal?.aborted ?? false;
    throw new ModelError(`reading the reply of ${url} failed`, { retryable: !aborted, timeout: aborted, cause });
  }
  if (!response.ok) {
    // Number(null) and Number("") are 0: an absent header must stay "not said", not "retry now".
    const header = response.headers.get("retry-after")?.trim();
    const retryAfter = header ? Number(header) : Number.NaN;
    throw new ModelError(`upstream ${response.status}: ${upstreamMessage(text)}`, {
      retryable: isRetryableStatus(response.status),
      upstreamStatus: response.status,
      retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null,
    });
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ModelError(`upstream sent malformed JSON (${text.length} bytes)`, { retryable: true, upstreamStatus: response.status, cause });
  }
}
