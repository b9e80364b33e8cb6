/**
 * @module The serving path's setup for bench:gateway's serving arm: one application key and one
 * served version on the bench's simulator (the same `vllm` backend the rollout gateway uses by
 * default), and each conversation's endpoint at `/v1/online`.
 */
import type { ChatEndpoint } from "../kit/chat-calls";

/** The version the bench serves; the split puts every session on it. */
const VERSION = "1";

async function send(workerUrl: string, method: string, path: string, body: unknown) {
  const response = await fetch(`${workerUrl}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as unknown;
}

/**
 * Creates an application (its rate limit far above what the bench sends, so no call meets a 429)
 * and serves `simulatorUrl` as the only version. Returns the application key.
 */
export async function setUpServing(workerUrl: string, simulatorUrl: string): Promise<string> {
  const created = (await send(workerUrl, "POST", "/v1/online/apps", {
    name: "bench-gateway",
    settings: { rate_limit: { per_second: 100_000, burst: 1_000_000 } },
  })) as { api_key?: string };
  if (!created.api_key) throw new Error("POST /v1/online/apps returned no api_key");
  await send(workerUrl, "PUT", "/v1/online/serving", {
    versions: { [VERSION]: { backend: { name: "vllm", replicas: [`${simulatorUrl}/v1`] } } },
    weights: { [VERSION]: 100 },
  });
  return created.api_key;
}

/** One conversation's serving endpoint: the application key, and the session named in its header. */
export function servingEndpoint(
  workerUrl: string,
  apiKey: string,
  sessionId: string,
): ChatEndpoint {
  return {
    baseURL: `${workerUrl}/v1/online`,
    apiKey,
    headers: { "x-edge-rollout-session": sessionId },
  };
}
