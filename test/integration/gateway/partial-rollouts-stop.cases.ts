/**
 * Integration cases (run by partial-rollouts.integration.test.ts, with its set-up, one after
 * another on the paced simulator): calls with stop strings are cut by a real `interrupt` sync and
 * resumed, and the gateway checks the stop strings across the cut, which vLLM cannot (it matches
 * them in one request's output). A stop string that straddles the cut ends the call where the
 * uninterrupted call ends: same text, finish and stop reasons, token ids, for streamed and
 * non-streamed callers; the continuation is closed upstream at once (the simulator stops running
 * it, nothing after the stop string is counted). With reasoning, the stop string applies to the
 * raw output as vLLM applies it, and the resumed call's reasoning and content are split as the
 * chat endpoint would have split them.
 */
import { expect, it } from "vitest";
import { createExternal } from "../../fixtures/external-rollouts";
import { getRollout } from "../../fixtures/rollouts";
import {
  configureSim,
  gatewayCall,
  inFlight,
  policyVersion,
  post,
  setSimVersion,
  sim,
  simChat,
  unpaced,
  untilInFlight,
} from "./partial-rollout-fixtures";
import type { JsonObject } from "../../../src/schemas/json";

type Delta = { content?: string; reasoning?: string };
type StreamChoice = {
  delta?: Delta;
  token_ids?: number[] | null;
  finish_reason?: string | null;
  stop_reason?: unknown;
};
type StreamChunk = { choices: StreamChoice[]; usage?: { completion_tokens: number } };

/** A streamed gateway call's chunks, read as they come; `onChunk` may act (a sync) before the next read. */
async function readChunks(
  result: Awaited<ReturnType<typeof gatewayCall>>,
  onChunk: (chunks: StreamChunk[]) => Promise<void> = async () => undefined,
): Promise<StreamChunk[]> {
  if (!result.ok || !("stream" in result))
    throw new Error(result.ok ? "expected a stream" : result.error.message);
  const chunks: StreamChunk[] = [];
  const reader = result.stream.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  let done = false;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    pending += decoder.decode(read.value, { stream: true });
    let boundary: number;
    while ((boundary = pending.indexOf("\n\n")) >= 0) {
      const event = pending.slice(0, boundary).replace(/^data: /, "");
      pending = pending.slice(boundary + 2);
      if (event === "[DONE]") done = true;
      else chunks.push(JSON.parse(event) as StreamChunk);
    }
    await onChunk(chunks);
  }
  expect(done).toBe(true);
  return chunks;
}

/** What a streamed caller got: text by field, token ids, and the finishing choice. */
function streamed(chunks: StreamChunk[]) {
  const choices = chunks.flatMap((chunk) => chunk.choices.slice(0, 1));
  return {
    content: choices.map((c) => c.delta?.content ?? "").join(""),
    reasoning: choices.map((c) => c.delta?.reasoning ?? "").join(""),
    ids: choices.flatMap((c) => c.token_ids ?? []),
    finish: choices.find((c) => c.finish_reason),
  };
}

/** A non-streamed gateway call's JSON reply. */
function replied(result: Awaited<ReturnType<typeof gatewayCall>>) {
  if (!result.ok || !("json" in result))
    throw new Error(result.ok ? "expected JSON" : result.error.message);
  return (
    JSON.parse(result.json) as {
      choices: Array<{
        message: { content: string; reasoning_content?: string };
        token_ids: number[];
        finish_reason: string;
        stop_reason: unknown;
      }>;
    }
  ).choices[0]!;
}

/** The interrupting sync: begin, the simulator's next weights (and pace), end. */
async function interruptingSync(v0: number, pace: number): Promise<void> {
  expect((await post("/v1/policy/sync/begin", { mode: "interrupt", wait_ms: 2_000 })).status).toBe(
    200,
  );
  await configureSim({ latency: { perTokenMs: pace } });
  await setSimVersion(v0 + 1);
  expect((await post("/v1/policy/sync/end", { policy_version: v0 + 1 })).status).toBe(200);
}

/** The simulator runs no request within 1 s: nothing kept generating after the calls ended. */
async function simulatorIdle(): Promise<void> {
  for (let tries = 0; ; tries++) {
    const stats = (await (await fetch(`${sim()}/sim/stats`)).json()) as {
      replica: { running: number };
    };
    if (stats.replica.running === 0) return;
    if (tries > 50) throw new Error(`the simulator still runs ${stats.replica.running} requests`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Tokens the stop string spans: at 200 ms a token, the sync has 17 tokens (3.4 s, for a loaded CI machine) to land inside it. */
const SPAN = 20;

it("ends a call whose stop string straddles the cut as the uninterrupted call ends (streamed, not streamed, stop string kept), and closes the continuation", async () => {
  const v0 = await policyVersion();
  const messages = [{ role: "user", content: "Tell me a story with a twist." }];
  // The uninterrupted call, and a stop string that starts at token `first` (its only occurrence).
  const whole = (await unpaced(() => simChat({ messages, max_tokens: 400, logprobs: true })))
    .choices[0]!;
  const strs = whole.logprobs!.content.map((entry) => entry.token);
  expect(strs.join("").startsWith(whole.message.content!)).toBe(true);
  let first = 4;
  const stopAt = (a: number) => strs.slice(a, a + SPAN).join("");
  while (whole.message.content!.indexOf(stopAt(first)) !== strs.slice(0, first).join("").length)
    if (++first > 40) throw new Error("no stop string occurs only once");
  const stop = stopAt(first);
  const body = (extra: JsonObject): JsonObject => ({
    model: "any",
    messages,
    max_tokens: 400,
    stop: [stop],
    ...extra,
  });
  const [expected, expectedKept] = await unpaced(() =>
    Promise.all([simChat(body({})), simChat(body({ include_stop_str_in_output: true }))]),
  );
  expect(expected.choices[0]).toMatchObject({
    finish_reason: "stop",
    stop_reason: stop,
    token_ids: whole.token_ids.slice(0, first + SPAN),
  });
  expect(expectedKept.choices[0]!.message.content).toBe(
    expected.choices[0]!.message.content + stop,
  );

  const [a, b, c] = await Promise.all([createExternal(), createExternal(), createExternal()]);
  await configureSim({ latency: { perTokenMs: 200 } });
  let synced = false;
  try {
    const calls = [
      gatewayCall(a.rollout_id, body({ stream: true, stream_options: { include_usage: true } })),
      gatewayCall(b.rollout_id, body({})),
      gatewayCall(c.rollout_id, body({ stream: true, include_stop_str_in_output: true })),
    ];
    await untilInFlight(3);
    // Cut once the first caller has the stop string's first two tokens (their text held back), long before its last.
    const chunks = await readChunks(await calls[0]!, async (so) => {
      if (synced || streamed(so).ids.length < first + 2) return;
      synced = true;
      await interruptingSync(v0, 25); // the continuations are paced too, so a continuation left running would show
    });
    const got = streamed(chunks);
    const kept = streamed(await readChunks(await calls[2]!));
    const json = replied(await calls[1]!);
    const ids = expected.choices[0]!.token_ids;
    expect(got).toMatchObject({
      content: expected.choices[0]!.message.content,
      ids,
      finish: { finish_reason: "stop", stop_reason: stop },
    });
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(ids.length);
    expect(json).toMatchObject({
      message: { content: expected.choices[0]!.message.content },
      token_ids: ids,
      finish_reason: "stop",
      stop_reason: stop,
    });
    expect(kept).toMatchObject({
      content: expectedKept.choices[0]!.message.content,
      ids,
      finish: { finish_reason: "stop", stop_reason: stop },
    });
    for (const rollout of [a, b, c]) {
      const [call] = (await getRollout(rollout.rollout_id)).llm_calls;
      expect(call!.interruption).toEqual({ interruptible: true, reason: null, interrupted: 1 });
      expect(call!.completion_token_ids).toEqual(ids);
      expect(call!.usage.completion_tokens).toBe(ids.length);
      expect(call!.stop_reason).toBe(stop);
      // The stop string straddles this call's cut: it began before it and was completed after it.
      const cut = call!.policy_version_runs![1]!.from_token;
      expect(cut).toBeGreaterThan(first);
      expect(cut).toBeLessThan(first + SPAN);
    }
    expect(await inFlight()).toBe(0);
    await simulatorIdle();
  } finally {
    await configureSim({ latency: { perTokenMs: 25 } });
  }
}, 30_000);

it("applies a stop string to a resumed think block's raw output as vLLM would: the reasoning, then the content up to the stop string", async () => {
  const v0 = await policyVersion();
  const messages = [{ role: "user", content: "Think it over, then tell me a story with a stop." }];
  await configureSim({ thinking: true, reasoningParser: true, latency: { perTokenMs: 0 } });
  try {
    const whole = (await simChat({ messages, max_tokens: 300 })).choices[0]!;
    const content = whole.message.content!;
    expect(whole.message.reasoning).toBeTruthy();
    // A stop string well into the content, found nowhere before it.
    const at = Math.min(20, Math.floor(content.length / 2));
    const stop = content.slice(at, at + 10);
    expect(content.indexOf(stop)).toBe(at);
    expect(whole.message.reasoning!.includes(stop)).toBe(false);
    const body = { model: "any", messages, max_tokens: 300, stop: stop };
    const expected = (await simChat(body)).choices[0]!;
    expect(expected).toMatchObject({
      finish_reason: "stop",
      stop_reason: stop,
      message: { content: content.slice(0, at), reasoning: whole.message.reasoning },
    });

    const [s, n] = await Promise.all([createExternal(), createExternal()]);
    // The think block is 8 tokens: cut after its fourth, at 200 ms a token the sync has 0.8 s to land
    // inside it. The engine steps both calls together, and the second may have joined a step later,
    // so it has at least three tokens then (its reasoning has begun to stream).
    await configureSim({ latency: { perTokenMs: 200 } });
    const calls = [
      gatewayCall(s.rollout_id, { ...body, stream: true }),
      gatewayCall(n.rollout_id, body),
    ];
    await untilInFlight(2);
    let synced = false;
    const got = streamed(
      await readChunks(await calls[0]!, async (so) => {
        if (synced || streamed(so).ids.length < 4) return;
        synced = true;
        await interruptingSync(v0, 0);
      }),
    );
    const json = replied(await calls[1]!);
    expect(got).toMatchObject({
      reasoning: expected.message.reasoning,
      content: expected.message.content,
      ids: expected.token_ids,
      finish: { finish_reason: "stop", stop_reason: stop },
    });
    expect(json).toMatchObject({
      message: { content: expected.message.content, reasoning_content: expected.message.reasoning },
      token_ids: expected.token_ids,
      finish_reason: "stop",
      stop_reason: stop,
    });
    const [call] = (await getRollout(s.rollout_id)).llm_calls;
    expect(call!.interruption).toEqual({ interruptible: true, reason: null, interrupted: 1 });
    // Cut inside the think block: before the tokens of its closing tag.
    const tagged = (await (
      await fetch(`${sim()}/tokenize`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "</think>" }),
      })
    ).json()) as { tokens: number[] };
    expect(call!.policy_version_runs![1]!.from_token).toBeLessThan(
      expected.token_ids.indexOf(tagged.tokens[0]!),
    );
    expect(call!.usage.completion_tokens).toBe(expected.token_ids.length);
    expect(await inFlight()).toBe(0);
  } finally {
    await configureSim({ thinking: false, reasoningParser: false, latency: { perTokenMs: 25 } });
  }
}, 30_000);
