/**
 * @module The Worker arm of `bench:routing`: the same workload through the real local Worker
 * (Miniflare, one isolate): the policy's `vllm` backend set to the run's replicas and routing
 * policy, one external rollout per member, every call through the rollout's own gateway
 * (`llm.base_url`), so routing runs where it runs in production, beside admission, the session's
 * recording and its `replicaHint`. One run per policy, not the in-process arm's repeats: the
 * one workerd thread, on the 2 cores it shares with the replicas, caps its calls/s, so each of
 * its runs takes about twice as long.
 */
import type { RoutingPolicyName } from "../../src/schemas/backend-config";
import type { JsonObject } from "../../src/schemas/json";
import { freePort } from "../../tools/simulator/free-port";
import { type BenchStack, startBenchStack } from "../kit/bench-stack";
import type { RoutingCaller } from "./routing-workload";

/** One rollout's gateway: where its calls go and the key they carry. */
interface Gateway {
  rolloutId: string;
  baseUrl: string;
  apiKey: string;
}

/** Starts the local Worker the arm runs through (its default model server is never called: every run sets the backend). */
export async function startWorkerStack(modelServerUrl: string): Promise<BenchStack> {
  return startBenchStack({
    kind: "miniflare",
    modelServerUrl,
    port: await freePort(),
    stateDir: "routing",
  });
}

async function send(url: string, method: string, body: unknown, apiKey?: string): Promise<unknown> {
  const response = await fetch(url, {
    method,
    headers: {
      "content-type": "application/json",
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** Runs `fn` over `items`, `width` at a time (creating hundreds of rollouts at once would time them out on 2 cores). */
async function inWaves<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width)
    out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

/** A caller through the Worker's gateway, with the rollouts made for `labels` beforehand; `finish` ends them. */
export async function workerCaller(
  workerUrl: string,
  options: { urls: string[]; policy: RoutingPolicyName; bound: number; maxTokens: number },
  labels: string[],
): Promise<{ caller: RoutingCaller; finish(): Promise<void> }> {
  await send(`${workerUrl}/v1/policy`, "PUT", {
    backend: {
      name: "vllm",
      replicas: options.urls,
      routing: { policy: options.policy, bound: options.bound },
    },
  });
  const gateways = new Map<string, Gateway>();
  await inWaves(labels, 16, async (label) => {
    const created = (await send(`${workerUrl}/v1/rollouts`, "POST", {
      agent: "external",
      task: { problem: `routing bench member ${label}` },
      config: { max_tokens_per_call: options.maxTokens },
    })) as { rollout_id: string; llm: { base_url: string; api_key: string } };
    gateways.set(label, {
      rolloutId: created.rollout_id,
      baseUrl: created.llm.base_url,
      apiKey: created.llm.api_key,
    });
  });
  const caller: RoutingCaller = {
    async call(label, body: JsonObject) {
      const gateway = gateways.get(label)!;
      const answer = (await send(
        `${gateway.baseUrl}/chat/completions`,
        "POST",
        body,
        gateway.apiKey,
      )) as {
        choices: Array<{ message: { content: string } }>;
        metrics?: { time_to_first_token_ms?: number };
      };
      return {
        content: answer.choices[0]!.message.content,
        replica: null,
        ttftMs: answer.metrics?.time_to_first_token_ms ?? null,
      };
    },
  };
  return {
    caller,
    finish: async () => {
      await inWaves([...gateways.values()], 16, (gateway) =>
        send(`${workerUrl}/v1/rollouts/${gateway.rolloutId}/finish`, "POST", {}),
      );
    },
  };
}
