/** @module The checks `edge-rollout doctor` runs, each with what to do when it fails. */
import type { PolicyView } from "../../src/schemas/policy";
import type { ApiClient } from "./api-client";
import { describeCause, OperationError, UnreachableError } from "./errors";
import { formatDuration } from "./format";

/** How one check came out. */
export type CheckStatus = "ok" | "warn" | "fail" | "skip";

/** One check: what was looked at, what was found, and how to fix it. */
export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

/** True when `version` (`v20.20.2`) meets a `>=X[.Y[.Z]]` engines range; other ranges are not understood (null). */
export function meetsMinimum(version: string, range: string): boolean | null {
  const minimum = /^\s*>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(range);
  const actual = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!minimum || !actual) return null;
  for (let i = 1; i <= 3; i++) {
    const have = Number(actual[i]);
    const need = Number(minimum[i] ?? 0);
    if (have !== need) return have > need;
  }
  return true;
}

/** Node's version against package.json's `engines.node`. */
export function checkNode(version: string, range: string | undefined): Check {
  if (!range)
    return {
      name: "node",
      status: "skip",
      detail: `${version}; package.json declares no engines.node`,
    };
  const meets = meetsMinimum(version, range);
  if (meets === null)
    return {
      name: "node",
      status: "warn",
      detail: `${version}; cannot compare with engines.node "${range}"`,
    };
  return meets
    ? { name: "node", status: "ok", detail: `${version} satisfies ${range}` }
    : {
        name: "node",
        status: "fail",
        detail: `${version} does not satisfy ${range}`,
        fix: `install Node ${range.replace(">=", "")} or newer (the pinned wrangler needs it)`,
      };
}

/** The stack's /health and an authenticated API read (`GET /v1/agents`); `unreachable` when /health got no answer. */
export async function checkStack(
  client: ApiClient,
): Promise<{ checks: Check[]; unreachable: boolean }> {
  const started = Date.now();
  try {
    await client.get("/health");
  } catch (error) {
    const fix =
      error instanceof UnreachableError
        ? "start the stack with `npx edge-rollout dev` (or `npm start`), or point --url / EDGE_ROLLOUT_URL at your deployment"
        : "check that --url is an edge-rollout deployment";
    return {
      checks: [
        {
          name: "stack",
          status: "fail",
          detail: `${client.url}/health: ${error instanceof Error ? error.message : String(error)}`,
          fix,
        },
      ],
      unreachable: error instanceof UnreachableError,
    };
  }
  const checks: Check[] = [
    {
      name: "stack",
      status: "ok",
      detail: `${client.url}/health answered in ${formatDuration(Date.now() - started)}`,
    },
  ];
  try {
    const { agents } = await client.get<{ agents: string[] }>("/v1/agents");
    checks.push({
      name: "api",
      status: "ok",
      detail: `${agents.length} agents registered: ${agents.join(", ") || "-"}`,
    });
  } catch (error) {
    const status = error instanceof OperationError ? error.status : undefined;
    const fix =
      status === 401 || status === 403
        ? "pass --token or set EDGE_ROLLOUT_TOKEN to the deployment's API_TOKEN"
        : undefined;
    checks.push({
      name: "api",
      status: "fail",
      detail: error instanceof Error ? error.message : String(error),
      ...(fix ? { fix } : {}),
    });
  }
  return { checks, unreachable: false };
}

/** The model servers the policy routes to, or null when it uses the deployment default (not visible over HTTP). */
export function policyServers(
  policy: PolicyView,
): { servers: string[]; apiKey?: string; tokenIds: boolean } | null {
  const backend = policy.backend;
  if (backend === null) return null;
  const apiKey = typeof backend.api_key === "string" ? backend.api_key : undefined;
  const list = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  const servers =
    backend.name === "vllm"
      ? list(backend.replicas)
      : backend.name === "vllm_pd"
        ? [...list(backend.prefill), ...list(backend.decode)]
        : typeof backend.base_url === "string"
          ? [backend.base_url]
          : [];
  return { servers, ...(apiKey ? { apiKey } : {}), tokenIds: backend.name !== "openai" };
}

/** A server URL without a trailing `/v1` (vLLM serves /health at the root). */
export function serverRoot(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}

async function fetchJson(
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  try {
    return { status: response.status, body: text === "" ? null : JSON.parse(text) };
  } catch {
    return { status: response.status, body: text.slice(0, 200) };
  }
}

/**
 * One model server: `GET /health`, then a 1-token chat with `return_token_ids` and `logprobs`,
 * which must answer with prompt and completion token ids (what the gateway records for training).
 */
export async function checkServer(
  url: string,
  options: { model?: string | null; apiKey?: string; expectTokenIds: boolean; timeoutMs?: number },
): Promise<Check[]> {
  const root = serverRoot(url);
  const name = `model server ${root}`;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  };
  try {
    const health = await fetchJson(`${root}/health`, { headers }, timeoutMs);
    if (health.status !== 200)
      return [
        {
          name,
          status: "fail",
          detail: `/health answered ${health.status}`,
          fix: "the server is up but not healthy: check its logs",
        },
      ];
  } catch (error) {
    return [
      {
        name,
        status: "fail",
        detail: `/health: ${describeCause(error)}`,
        fix: "start the model server, or fix its URL in the policy (PUT /v1/policy {backend}) / --model-url",
      },
    ];
  }
  const checks: Check[] = [{ name, status: "ok", detail: "/health ok" }];
  try {
    let model = options.model ?? null;
    if (!model) {
      const models = await fetchJson(`${root}/v1/models`, { headers }, timeoutMs);
      model = (models.body as { data?: Array<{ id?: string }> } | null)?.data?.[0]?.id ?? null;
    }
    if (!model)
      return [
        ...checks,
        {
          name,
          status: "fail",
          detail: "GET /v1/models lists no model",
          fix: "serve a model, or set it in the policy (PUT /v1/policy {model})",
        },
      ];
    const body = {
      model,
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 1,
      temperature: 0,
      logprobs: true,
      return_token_ids: true,
    };
    const chat = await fetchJson(
      `${root}/v1/chat/completions`,
      { method: "POST", headers, body: JSON.stringify(body) },
      timeoutMs,
    );
    if (chat.status !== 200)
      return [
        ...checks,
        {
          name,
          status: "fail",
          detail: `1-token chat with model ${model} answered ${chat.status}: ${JSON.stringify(chat.body).slice(0, 200)}`,
        },
      ];
    const reply = chat.body as {
      prompt_token_ids?: unknown;
      choices?: Array<{ token_ids?: unknown; logprobs?: { content?: unknown[] } | null }>;
    };
    const prompt = Array.isArray(reply.prompt_token_ids) ? reply.prompt_token_ids.length : 0;
    const completion = Array.isArray(reply.choices?.[0]?.token_ids)
      ? (reply.choices[0].token_ids as unknown[]).length
      : 0;
    const logprobs = reply.choices?.[0]?.logprobs?.content?.length ?? 0;
    if (prompt > 0 && completion > 0) {
      checks.push({
        name,
        status: logprobs > 0 ? "ok" : "warn",
        detail: `model ${model} returns token ids (${prompt} prompt, ${completion} completion)${logprobs > 0 ? " and logprobs" : " but no logprobs"}`,
        ...(logprobs > 0 ? {} : { fix: "the server must return logprobs for training samples" }),
      });
    } else {
      const why = options.expectTokenIds ? "fail" : "warn";
      checks.push({
        name,
        status: why,
        detail: `model ${model} answered without token ids (return_token_ids ignored)`,
        fix: options.expectTokenIds
          ? "use a vLLM release that supports return_token_ids: without the engine's token ids no call can train"
          : "the openai backend is for evaluation only; use the vllm backend to train",
      });
    }
  } catch (error) {
    checks.push({
      name,
      status: "fail",
      detail: `1-token chat: ${describeCause(error)}`,
      fix: "the server answers /health but not chat completions: check its logs",
    });
  }
  return checks;
}
