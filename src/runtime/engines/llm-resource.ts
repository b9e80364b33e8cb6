/** @module The `llm` resource inside the Worker: an OpenAI client whose fetch reaches the rollout's gateway in-process. */
import OpenAI from "openai";
import { ATTEMPT_HEADER, type CallPurpose, PURPOSE_HEADER } from "../../schemas/llm-call";
import type { RolloutSpec } from "../../schemas/rollout-api";
import type { FetchFunction, LlmResource } from "../../sdk/resources";

/** The origin of `base_url` when the deployment sets no PUBLIC_URL (requests never leave the isolate). */
export const INTERNAL_ORIGIN = "http://edge-rollout.internal";

/** The Worker's own gateway routes, reached without a network hop. */
export interface InWorkerGateway {
  /** The origin in `base_url`: the deployment's PUBLIC_URL, else INTERNAL_ORIGIN. */
  origin: string;
  /** Serves `request` with the Worker's own HTTP app, in this isolate. */
  fetch(request: Request): Promise<Response>;
  /** The rollout's gateway key. */
  keyFor(rolloutId: string): Promise<string>;
}

/** How the resource reports to the attempt running it. */
export interface LlmHooks {
  attempt: number;
  /** Aborts every call when the attempt is given up. */
  signal: AbortSignal;
  /** A call started or ended. */
  touch(): void;
  /** The call waits out a weight sync (the idle clock stops meanwhile). */
  pause(waiting: boolean): void;
  /** The gateway refused a call for a rollout limit: the rollout ends with that reason. */
  onLimit(reason: "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH", message: string): void;
}

const LIMIT_CODES = {
  max_prompt_length: "MAX_PROMPT_LENGTH",
  max_response_length: "MAX_RESPONSE_LENGTH",
} as const;

/** The problem code of an error response (`urn:edge-rollout:problem:<code>`), read from a copy. */
async function problemCode(response: Response): Promise<{ code: string | null; detail: string }> {
  try {
    const body = (await response.clone().json()) as { type?: unknown; detail?: unknown };
    const code = typeof body.type === "string" ? (body.type.split(":").at(-1) ?? null) : null;
    return { code, detail: typeof body.detail === "string" ? body.detail : "" };
  } catch {
    return { code: null, detail: "" };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => (signal.removeEventListener("abort", onAbort), resolve()), ms);
    const onAbort = () => (clearTimeout(timer), reject(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A fetch bound to one attempt: it adds the rollout key (unless the caller sent one) and the
 * attempt header, aborts with the attempt, waits out weight syncs as the step loop does (the
 * gateway answers HTTP callers 429 + Retry-After meanwhile), and reports limit refusals.
 */
export function attemptFetch(
  gateway: InWorkerGateway,
  apiKey: string,
  hooks: LlmHooks,
  purpose: CallPurpose = "policy",
): FetchFunction {
  return async function fetchThroughGateway(input, init) {
    const original = new Request(input, init);
    const headers = new Headers(original.headers);
    headers.set(ATTEMPT_HEADER, String(hooks.attempt));
    if (purpose !== "policy") headers.set(PURPOSE_HEADER, purpose);
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${apiKey}`);
    const signal = AbortSignal.any([original.signal, hooks.signal]);
    // Bodies are small JSON; holding them lets a call refused during a weight sync be sent again.
    const body = original.body ? await original.arrayBuffer() : null;
    for (;;) {
      signal.throwIfAborted();
      hooks.touch();
      const response = await gateway.fetch(
        new Request(original.url, { method: original.method, headers, body, signal }),
      );
      hooks.touch();
      if (response.status !== 429 && response.status !== 400) return response;
      const { code, detail } = await problemCode(response);
      if (
        response.status === 400 &&
        (code === "max_prompt_length" || code === "max_response_length")
      )
        hooks.onLimit(LIMIT_CODES[code], detail);
      if (response.status !== 429 || code !== "policy_syncing") return response;
      hooks.pause(true);
      try {
        await sleep(Number(response.headers.get("retry-after") ?? 1) * 1000, signal);
      } finally {
        hooks.pause(false);
      }
    }
  };
}

/** The model name the gateway serves (`GET …/models`), for clients that need one in each request. */
async function servedModel(baseUrl: string, fetchFn: FetchFunction): Promise<string> {
  const response = await fetchFn(`${baseUrl}/models`);
  if (!response.ok) return "policy";
  const listed = (await response.json()) as { data?: Array<{ id?: unknown }> };
  const id = listed.data?.[0]?.id;
  return typeof id === "string" ? id : "policy";
}

/** Options of `createLlmResource`. */
export interface LlmResourceOptions {
  /** `judge` marks every call as a grader's (recorded, never trained on). Default `policy`. */
  purpose?: CallPurpose;
  /** The served model, when already known (saves a `GET …/models`). */
  model?: string;
}

/**
 * The `llm` resource of one attempt: `base_url` (= `endpoint`) is `<origin>/v1/rollouts/<id>/llm/v1`
 * and every request goes through the Worker's own gateway routes, so it is recorded exactly like an
 * external agent's call (token ids, logprobs, policy version) and tagged with the attempt.
 */
export async function createLlmResource(
  gateway: InWorkerGateway,
  spec: RolloutSpec,
  hooks: LlmHooks,
  options: LlmResourceOptions = {},
): Promise<LlmResource> {
  const config = spec.config;
  const base_url = `${gateway.origin}/v1/rollouts/${spec.rollout_id}/llm/v1`;
  const api_key = await gateway.keyFor(spec.rollout_id);
  const fetchFn = attemptFetch(gateway, api_key, hooks, options.purpose);
  const model = options.model ?? config.model ?? (await servedModel(base_url, fetchFn));
  // No client retries: the gateway already retries upstream faults, and a retry here would record twice.
  const openai = new OpenAI({
    baseURL: base_url,
    apiKey: api_key,
    fetch: fetchFn as never,
    maxRetries: 0,
  });
  return {
    base_url,
    endpoint: base_url,
    api_key,
    model,
    sampling_parameters: {
      temperature: config.temperature,
      top_p: config.top_p,
      seed: config.seed,
    },
    openai,
    fetch: fetchFn,
  };
}
