/**
 * Harness turns through the gateway against the simulator (Qwen3's tokenizer and template): a
 * turn that continues the previous call is sent from token ids, its prompt is the previous prompt
 * and sampled ids plus the new part, and that equals what the template renders for the whole
 * conversation; the harness's re-serialised copy of the model's turn never reaches the prompt.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALCULATE_TOOL } from "../../../../src/agents/calculator/calculate-tool";
import { createVllmBackend } from "../../../../src/gateway/backends";
import { type GatewayCall, createGateway } from "../../../../src/gateway/gateway";
import type { ChatMessage } from "../../../../src/schemas/chat";
import type { JsonObject } from "../../../../src/schemas/json";
import type { LlmCall } from "../../../../src/schemas/llm-call";
import { type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import { encodeCall } from "../../../../src/runtime/session/kernel";
import { ROOMY_LIMITS } from "../backends/backend-fixtures";

let sim: VllmSimulator;
let n = 0;
const turnCall = (previous: LlmCall | null): GatewayCall => ({
  rolloutId: "turns",
  stepId: null,
  callId: `turns/gw/${n++}`,
  train: true,
  limits: ROOMY_LIMITS,
  replicaHint: null,
  whileSyncing: "refuse",
  turn: { previous },
});
/** A gateway over the simulator at `url`. */
const gatewayOver = (url: string) =>
  createGateway({
    policy: null,
    backendFor: () => createVllmBackend({ baseUrl: `${url}/v1` }),
    defaultModel: "sim-qwen3",
    now: Date.now,
  });
const gateway = () => gatewayOver(sim.url);
const tools = [CALCULATE_TOOL] as unknown as JsonObject[];

/** The harness's copy of an assistant turn: arguments re-serialised with spaces, as opencode does. */
function harnessCopy(message: ChatMessage): JsonObject {
  return {
    role: "assistant",
    content: message.content ?? null,
    tool_calls: (message.tool_calls ?? []).map((call) => ({
      ...call,
      function: {
        ...call.function,
        arguments: JSON.stringify(JSON.parse(call.function.arguments), null, 1),
      },
    })),
  } as JsonObject;
}

/**
 * A harness's tool loop: the question, the model's tool call, the tool's result sent back with the
 * harness's copy of the call, and the call that continues it.
 */
async function toolLoop(gw: ReturnType<typeof gatewayOver>, question: string, output: string) {
  const user = { role: "user", content: question };
  const first = await gw.send("/chat/completions", { messages: [user], tools }, turnCall(null));
  const answer = first.call.response_message;
  const result = { role: "tool", tool_call_id: answer.tool_calls![0]!.id, content: output };
  const second = await gw.send(
    "/chat/completions",
    { messages: [user, harnessCopy(answer), result], tools },
    turnCall(first.call),
  );
  const base = [...first.call.prompt_token_ids, ...first.call.completion_token_ids];
  return { user, first, answer, result, second, base };
}

async function render(messages: unknown[]): Promise<number[]> {
  const reply = await fetch(`${sim.url}/tokenize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "sim-qwen3", messages, tools, add_generation_prompt: true }),
  });
  const body = (await reply.json()) as { tokens?: number[] };
  if (!body.tokens) throw new Error(`tokenize: ${JSON.stringify(body)}`);
  return body.tokens;
}

beforeAll(async () => {
  sim = await startVllmSimulator({ port: 0, seed: 11 });
});
afterAll(async () => sim.close());

describe("token-exact harness turns", () => {
  it("builds a continuation's prompt from the previous ids, equal to the template's rendering", async () => {
    const loop = await toolLoop(gateway(), "What is 17 * 23? Use the calculate tool.", "391");
    const { user, first, answer, result, second, base } = loop;
    expect(first.call.continuation).toEqual({ token_exact: false, reason: "first call" });
    expect(second.call.continuation).toEqual({ token_exact: true, via: "tool_call_ids" });
    expect(second.call.prompt_token_ids.slice(0, base.length)).toEqual(base);
    // The recorded request holds the gateway's own turn, not the harness's copy, so the call is
    // stored as what the previous one lacks: the tool result alone.
    expect((second.call.request.messages as ChatMessage[])[1]).toEqual(answer);
    const stored = encodeCall(second.call, first.call);
    expect(stored.request.messages).toEqual([result]);
    expect(stored.stored_prefix).toMatchObject({ messages: 2, prompt_tokens: base.length });
    expect(second.call.prompt_token_ids).toEqual(await render([user, answer, result]));
  });

  it("renders the call whole when the conversation does not continue the previous one", async () => {
    const gw = gateway();
    const first = await gw.send(
      "/chat/completions",
      { messages: [{ role: "user", content: "What is 2 + 2?" }], tools },
      turnCall(null),
    );
    const other = await gw.send(
      "/chat/completions",
      { messages: [{ role: "user", content: "Something else entirely" }], tools },
      turnCall(first.call),
    );
    expect(other.call.continuation?.token_exact).toBe(false);
    expect(other.call.continuation?.reason).toBe("shorter than the previous call");
  });
});

describe("token-exact harness turns with reasoning", () => {
  let thinking: VllmSimulator;
  beforeAll(async () => {
    thinking = await startVllmSimulator({
      port: 0,
      seed: 4,
      thinking: true,
      reasoningParser: true,
      stripThinkInHistory: true,
    });
  });
  afterAll(async () => thinking.close());
  const over = () => gatewayOver(thinking.url);

  it("continues after a tool result with the sampled reasoning kept in the prompt", async () => {
    const loop = await toolLoop(over(), "What is 6 * 7? Use the calculate tool.", "42");
    const { answer, second, base } = loop;
    expect(answer.reasoning_content ?? (answer as JsonObject).reasoning).toBeTruthy();
    expect(second.call.continuation).toEqual({ token_exact: true, via: "tool_call_ids" });
    // The reasoning the model sampled stays in the prompt, whatever the harness re-sent.
    expect(second.call.prompt_token_ids.slice(0, base.length)).toEqual(base);
  });
});
