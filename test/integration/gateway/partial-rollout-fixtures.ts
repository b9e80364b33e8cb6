/**
 * @module The partial-rollout tests' set-up: the paced simulator (answers of 160+ tokens, 25 ms
 * apart, so a weight sync lands mid-generation), its config, the policy's calls in flight, a call
 * straight to a rollout's session object, and what the simulator generates uninterrupted.
 */
import { objects } from "../../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { inject } from "vitest";
import type { JsonObject } from "../../../src/schemas/json";
import { api } from "../../fixtures/rollouts";

/** The paced simulator's base URL. */
export const sim = (): string => inject("partialRolloutsSimulatorUrl");

/** POSTs JSON to the Worker. */
export const post = (path: string, body: unknown): Promise<Response> =>
  api(path, { method: "POST", body: JSON.stringify(body) });

/** The policy's calls in flight (admissions). */
export const inFlight = async (): Promise<number> =>
  ((await (await api("/v1/policy")).json()) as { in_flight: number }).in_flight;

/** The policy version now. */
export const policyVersion = async (): Promise<number> =>
  ((await (await api("/v1/policy")).json()) as { policy_version: number }).policy_version;

/** Changes the paced simulator's config (a request keeps the config it arrived under). */
export const configureSim = (patch: Record<string, unknown>): Promise<Response> =>
  fetch(`${sim()}/sim/config`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(patch),
  });

/** Sets the simulator's weights version (which changes its logprobs, not its greedy tokens). */
export const setSimVersion = (version: number): Promise<Response> =>
  configureSim({ policyVersion: version });

/** References are generated unpaced (a request keeps the config it arrived under, so calls in flight are not affected). */
export async function unpaced<T>(work: () => Promise<T>): Promise<T> {
  await configureSim({ latency: { perTokenMs: 0 } });
  try {
    return await work();
  } finally {
    await configureSim({ latency: { perTokenMs: 25 } });
  }
}

/** A chat completion straight from the simulator (no gateway), with token ids. */
export async function simChat(body: JsonObject): Promise<{
  choices: Array<{
    message: { content: string | null; reasoning?: string | null };
    token_ids: number[];
    finish_reason: string;
    stop_reason: string | number | null;
    logprobs?: { content: Array<{ logprob: number; token: string }> };
  }>;
  usage: { completion_tokens: number };
}> {
  const reply = await fetch(`${sim()}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ temperature: 0, return_token_ids: true, ...body, model: "sim-qwen3" }),
  });
  if (reply.status !== 200)
    throw new Error(`the simulator answered ${reply.status}: ${await reply.text()}`);
  return reply.json() as never;
}

/** What the simulator generates for `content` uninterrupted (greedy, under its current weights version): ids and logprobs. */
export async function reference(content: string): Promise<{ ids: number[]; logprobs: number[] }> {
  const body = await simChat({
    messages: [{ role: "user", content }],
    max_tokens: 400,
    logprobs: true,
  });
  return {
    ids: body.choices[0]!.token_ids,
    logprobs: body.choices[0]!.logprobs!.content.map((entry) => entry.logprob),
  };
}

/** One call through a rollout's session object (what the HTTP gateway route forwards to). */
export function gatewayCall(rolloutId: string, body: JsonObject) {
  return objects(env)
    .session(rolloutId)
    .gatewayCall("/chat/completions", body, {
      rolloutId,
      callId: `${rolloutId}/gw/${crypto.randomUUID()}`,
      attempt: null,
      purpose: "policy",
    });
}

/** Waits until `count` calls are admitted. */
export async function untilInFlight(count: number, tries = 400): Promise<void> {
  for (let tried = 0; (await inFlight()) < count; tried++) {
    if (tried > tries) throw new Error(`only ${await inFlight()} calls were admitted`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
