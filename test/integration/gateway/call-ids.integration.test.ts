/**
 * Integration: a client's own call ids (`x-edge-rollout-call-id`): every answer names its call,
 * asking again with the same id reads the recorded call's answer (JSON or SSE) instead of
 * generating anew, the id may be given bare or as the gateway answered it, and a bad id is a 400.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CALL_ID_HEADER } from "../../../src/schemas/llm-call";
import { createExternal, type ExternalRollout } from "../../fixtures/external-rollouts";
import { getRollout } from "../../fixtures/rollouts";

/** The parts of a chat completion these tests compare. */
interface Completion {
  choices: Array<{ message: { content: string | null }; token_ids: number[] }>;
}

const QUESTION = { model: "any", messages: [{ role: "user", content: "What is 6 * 7?" }] };

/** POSTs a chat call to the rollout's gateway, naming it `callId` when given. */
function chat(
  rollout: ExternalRollout,
  body: Record<string, unknown>,
  callId?: string,
): Promise<Response> {
  return exports.default.fetch(`${rollout.llm.base_url}/chat/completions`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${rollout.llm.api_key}`,
      "content-type": "application/json",
      ...(callId === undefined ? {} : { [CALL_ID_HEADER]: callId }),
    },
    body: JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE body, `[DONE]` included. */
function ssePayloads(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice("data: ".length));
}

/** The completion token ids an SSE body's chunks carry, in order. */
function streamedTokenIds(payloads: string[]): number[] {
  return payloads
    .filter((payload) => payload !== "[DONE]")
    .flatMap(
      (payload) =>
        (JSON.parse(payload) as { choices: Array<{ token_ids?: number[] }> }).choices[0]
          ?.token_ids ?? [],
    );
}

describe("client call ids on the rollout gateway (integration)", () => {
  it("answers a named call with its full id in x-edge-rollout-call-id, the id the call is recorded under", async () => {
    const rollout = await createExternal();
    const response = await chat(rollout, QUESTION, "my-call-1");
    expect(response.status).toBe(200);
    const fullId = `${rollout.rollout_id}/gw/my-call-1`;
    expect(response.headers.get(CALL_ID_HEADER)).toBe(fullId);
    await response.json();
    const { llm_calls } = await getRollout(rollout.rollout_id);
    expect(llm_calls).toHaveLength(1);
    expect(llm_calls[0]!.call_id).toBe(fullId);
  });

  it("names an unnamed call too, with an id of the rollout's gateway", async () => {
    const rollout = await createExternal();
    const response = await chat(rollout, QUESTION);
    expect(response.status).toBe(200);
    await response.json();
    const header = response.headers.get(CALL_ID_HEADER);
    expect(header).toMatch(new RegExp(`^${rollout.rollout_id}/gw/.+`));
    expect((await getRollout(rollout.rollout_id)).llm_calls[0]!.call_id).toBe(header);
  });

  it("answers a named call asked again with the recorded completion, generating nothing new", async () => {
    const rollout = await createExternal();
    const first = await chat(rollout, QUESTION, "my-call-1");
    expect(first.status).toBe(200);
    const original = (await first.json()) as Completion;
    const again = await chat(rollout, QUESTION, "my-call-1");
    expect(again.status).toBe(200);
    expect(again.headers.get(CALL_ID_HEADER)).toBe(`${rollout.rollout_id}/gw/my-call-1`);
    const replayed = (await again.json()) as Completion;
    expect(replayed.choices[0]!.token_ids).toEqual(original.choices[0]!.token_ids);
    expect(replayed.choices[0]!.message.content).toBe(original.choices[0]!.message.content);
    const { llm_calls } = await getRollout(rollout.rollout_id);
    expect(llm_calls).toHaveLength(1);
    expect(llm_calls[0]!.completion_token_ids).toEqual(original.choices[0]!.token_ids);
  });

  it("answers a streamed retry of a recorded call with an SSE stream of the same token ids, ending with [DONE]", async () => {
    const rollout = await createExternal();
    const first = await chat(rollout, QUESTION, "my-call-1");
    const original = (await first.json()) as Completion;
    expect(original.choices[0]!.token_ids.length).toBeGreaterThan(0);
    const again = await chat(rollout, { ...QUESTION, stream: true }, "my-call-1");
    expect(again.status).toBe(200);
    expect(again.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(again.headers.get(CALL_ID_HEADER)).toBe(`${rollout.rollout_id}/gw/my-call-1`);
    const payloads = ssePayloads(await again.text());
    expect(payloads.at(-1)).toBe("[DONE]");
    expect(streamedTokenIds(payloads)).toEqual(original.choices[0]!.token_ids);
    expect((await getRollout(rollout.rollout_id)).llm_calls).toHaveLength(1);
  });

  it("takes the id given back as the gateway answered it (<rollout>/gw/<id>) as the same call", async () => {
    const rollout = await createExternal();
    const first = await chat(rollout, QUESTION, "my-call-1");
    const original = (await first.json()) as Completion;
    const fullId = first.headers.get(CALL_ID_HEADER)!;
    expect(fullId).toBe(`${rollout.rollout_id}/gw/my-call-1`);
    const again = await chat(rollout, QUESTION, fullId);
    expect(again.status).toBe(200);
    expect(again.headers.get(CALL_ID_HEADER)).toBe(fullId);
    expect(((await again.json()) as Completion).choices[0]!.token_ids).toEqual(
      original.choices[0]!.token_ids,
    );
    const { llm_calls } = await getRollout(rollout.rollout_id);
    expect(llm_calls.map((call) => call.call_id)).toEqual([fullId]);
  });

  it("generates anew for a different call id, recording a second call", async () => {
    const rollout = await createExternal();
    await (await chat(rollout, QUESTION, "my-call-1")).json();
    const other = await chat(rollout, QUESTION, "my-call-2");
    expect(other.status).toBe(200);
    await other.json();
    const { llm_calls } = await getRollout(rollout.rollout_id);
    expect(llm_calls.map((call) => call.call_id).sort()).toEqual([
      `${rollout.rollout_id}/gw/my-call-1`,
      `${rollout.rollout_id}/gw/my-call-2`,
    ]);
  });

  it.each([
    ["a space", "has space"],
    ["200 characters", "x".repeat(200)],
    ["a slash", "a/b"],
  ])(
    "refuses a call id with %s: 400 problem+json naming x-edge-rollout-call-id",
    async (_, bad) => {
      const rollout = await createExternal();
      const response = await chat(rollout, QUESTION, bad);
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      const problem = (await response.json()) as { detail: string };
      expect(problem.detail).toContain(CALL_ID_HEADER);
      expect((await getRollout(rollout.rollout_id)).llm_calls).toHaveLength(0);
    },
  );
});
