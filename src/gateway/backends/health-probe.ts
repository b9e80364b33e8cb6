/** @module The lazy readmission check: `GET /health` at a vLLM server's root. */

/** How long a probe may take before the replica counts as still down. */
export const PROBE_TIMEOUT_MS = 2_000;

/**
 * Resolves true when `GET {root}/health` answers 2xx within `timeoutMs`; never rejects. vLLM
 * answers 200 with an empty body once the engine is up, 503 while it is not.
 */
export async function probeHealth(
  fetcher: typeof fetch,
  root: string,
  options: { apiKey?: string | undefined; timeoutMs?: number } = {},
): Promise<boolean> {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  try {
    const response = await fetcher(`${root}/health`, {
      method: "GET",
      headers,
      signal: AbortSignal.timeout(options.timeoutMs ?? PROBE_TIMEOUT_MS),
    });
    // Drain the body so the connection can be reused (and Workers does not warn about it).
    await response.arrayBuffer().catch(() => undefined);
    return response.ok;
  } catch {
    return false;
  }
}
