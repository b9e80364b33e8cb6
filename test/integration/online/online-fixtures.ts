/** @module Online serving in integration tests: applications, the serving versions, and the real openai client on `/v1/online`. */
import { env, exports } from "cloudflare:workers";
import OpenAI from "openai";
import { api } from "../../fixtures/rollouts";

/** What `POST /v1/online/apps` answers. */
export interface CreatedApp {
  app: { app_id: string; key_prefix: string; revoked_at: number | null };
  api_key: string;
}

/** `method path` with a JSON body, as the admin (tests run without API_TOKEN) or with `key`. */
export function send(
  method: string,
  path: string,
  body?: unknown,
  key?: string,
): Promise<Response> {
  return api(path, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

/** A new application (settings as given); fails unless created. */
export async function createApp(settings: Record<string, unknown> = {}): Promise<CreatedApp> {
  const response = await send("POST", "/v1/online/apps", { name: "test app", settings });
  if (response.status !== 201)
    throw new Error(`create app: ${response.status} ${await response.text()}`);
  return (await response.json()) as CreatedApp;
}

/** Serves versions 3 and 4, both from the test simulator, split by `weights`. */
export async function serveVersions(weights: Record<string, number>): Promise<void> {
  const backend = { name: "vllm", replicas: [`${env.SIMULATOR_URL}/v1`] };
  const response = await send("PUT", "/v1/online/serving", {
    versions: { "3": { backend }, "4": { backend } },
    weights,
  });
  if (response.status !== 200)
    throw new Error(`serving: ${response.status} ${await response.text()}`);
}

/** The real openai client at `/v1/online` with `key`, the conversation named `sessionId`. */
export function onlineClient(key: string, sessionId: string, promptKey?: string): OpenAI {
  return new OpenAI({
    baseURL: "http://w/v1/online",
    apiKey: key,
    maxRetries: 0,
    defaultHeaders: {
      "x-edge-rollout-session": sessionId,
      ...(promptKey ? { "x-edge-rollout-prompt-key": promptKey } : {}),
    },
    fetch: (url, init) => exports.default.fetch(url as string, init as RequestInit),
  });
}

/** One short chat turn of `sessionId`. */
export async function chat(key: string, sessionId: string, promptKey?: string): Promise<void> {
  await onlineClient(key, sessionId, promptKey).chat.completions.create({
    model: "any",
    messages: [{ role: "user", content: "What is 2 + 2?" }],
    max_tokens: 8,
  });
}

/** One session as its application reads it. */
export interface SessionRead {
  session_id: string;
  rollout_id: string;
  version: number;
  status: "open" | "scored" | "withheld";
  reward: number | null;
  feedback: Array<{ reward: number; source: string }>;
  llm_calls: Array<{
    policy_version_start: number;
    prompt_token_ids: number[];
    completion_token_ids: number[];
    logprobs: unknown;
  }>;
}

/** `GET /v1/online/sessions/:id` with `key` (must answer 200). */
export async function readSession(key: string, sessionId: string): Promise<SessionRead> {
  const response = await send("GET", `/v1/online/sessions/${sessionId}`, undefined, key);
  if (response.status !== 200)
    throw new Error(`read session: ${response.status} ${await response.text()}`);
  return (await response.json()) as SessionRead;
}
