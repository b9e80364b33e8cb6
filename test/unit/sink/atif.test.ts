import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALCULATE_TOOL, runCalculate } from "../../../src/agents/calculator/calculate-tool";
import { createVllmBackend } from "../../../src/gateway/backends";
import { createGateway } from "../../../src/gateway/gateway";
import type { ChatMessage } from "../../../src/schemas/chat";
import type { JsonObject } from "../../../src/schemas/json";
import type { LlmCall } from "../../../src/schemas/llm-call";
import { stepIdFor } from "../../../src/schemas/step";
import { toAtif } from "../../../src/sink/formats/atif";
import { validateAtif } from "../../../src/sink/formats/atif-schema";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { type Conversation, calculatorConversation, clientFor, viewOf } from "./sink-fixtures";

type Doc = JsonObject & {
  steps: Array<Record<string, any>>;
  extra: Record<string, any>;
  agent: Record<string, any>;
};
const LIMITS = {
  max_prompt_length: 131072,
  max_response_length: 4096,
  max_tokens_per_call: null,
  completion_tokens_used: 0,
  last_context_tokens: 0,
  last_context_messages: 0,
};

/** An agent outside the Worker: keeps the raw reply messages (with vLLM's extra null fields) and calls the gateway itself. */
async function externalAgent(
  sim: VllmSimulator,
  rolloutId: string,
): Promise<{ calls: LlmCall[]; messages: ChatMessage[] }> {
  const backend = createVllmBackend({ baseUrl: `${sim.url}/v1` });
  const gateway = createGateway({
    policy: null,
    backendFor: () => backend,
    defaultModel: "sim-qwen3",
    now: Date.now,
  });
  const messages: ChatMessage[] = [{ role: "user", content: "What is 6 * 7?" }];
  const calls: LlmCall[] = [];
  for (let i = 0; i < 3; i++) {
    const body = {
      messages: structuredClone(messages),
      tools: [CALCULATE_TOOL],
    } as unknown as JsonObject;
    const { reply, call } = await gateway.send("/chat/completions", body, {
      rolloutId,
      stepId: null,
      callId: `${rolloutId}/ext/${i}`,
      train: true,
      limits: LIMITS,
      replicaHint: null,
      whileSyncing: "refuse",
    });
    calls.push(call);
    const message = (reply as { choices: Array<{ message: ChatMessage }> }).choices[0]!.message;
    messages.push(message);
    if (!message.tool_calls?.length) break;
    for (const toolCall of message.tool_calls)
      messages.push({
        role: "tool",
        tool_call_id: toolCall.id,
        content: runCalculate(toolCall.function.arguments),
      });
  }
  return { calls, messages };
}

describe("toAtif", () => {
  let sim: VllmSimulator;
  let talk: Conversation;
  let doc: Doc;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 3, successRate: 1, thinking: true });
    talk = await calculatorConversation(clientFor(sim), "r-a", [
      "What is 17 * (4 + 5)?",
      "And what is 3 + 4 * 2?",
    ]);
    const steps = talk.calls.map((call, index) => ({
      step_id: stepIdFor("r-a", index),
      step_index: index,
      action: null,
      observation: null,
      reward: index === 3 ? 1 : 0,
      done: index === 3,
    }));
    const view = viewOf("r-a", talk.calls, { reward: 1 }, steps);
    doc = toAtif(view) as Doc;
  });
  afterAll(() => sim.close());

  it("exports a calculator conversation that passes validateAtif, also after a JSON round trip", () => {
    expect(validateAtif(doc)).toEqual([]);
    expect(validateAtif(JSON.parse(JSON.stringify(doc)))).toEqual([]);
    expect(doc).toMatchObject({
      schema_version: "ATIF-v1.7",
      session_id: "r-a",
      agent: { name: "calculator", model_name: "sim-qwen3", tool_definitions: [CALCULATE_TOOL] },
    });
    expect(doc.steps.map((step) => step.step_id)).toEqual(doc.steps.map((_, i) => i + 1));
    expect(doc.steps.map((step) => step.source)).toEqual([
      "system",
      "user",
      "agent",
      "agent",
      "user",
      "agent",
      "agent",
    ]);
  });

  it("puts each call's token ids, logprobs and usage in its agent step's metrics", () => {
    const agents = doc.steps.filter((step) => step.source === "agent");
    expect(agents).toHaveLength(talk.calls.length);
    agents.forEach((step, i) => {
      const call = talk.calls[i]!;
      expect(step.metrics).toMatchObject({
        prompt_tokens: call.usage.prompt_tokens,
        completion_tokens: call.usage.completion_tokens,
        prompt_token_ids: call.prompt_token_ids,
        completion_token_ids: call.completion_token_ids,
        logprobs: call.logprobs,
      });
      expect(step).toMatchObject({
        llm_call_count: 1,
        timestamp: new Date(call.created_at).toISOString(),
        extra: { call_id: call.call_id, finish_reason: call.finish_reason },
      });
    });
  });

  it("links tool results to the calling step and moves <think> into reasoning_content", () => {
    const caller = doc.steps[2]!;
    const toolCall = talk.calls[0]!.response_message.tool_calls![0]!;
    expect(caller.tool_calls).toEqual([
      {
        tool_call_id: toolCall.id,
        function_name: "calculate",
        arguments: { expression: "17 * (4 + 5)" },
      },
    ]);
    expect(caller.observation).toEqual({
      results: [{ source_call_id: toolCall.id, content: "153" }],
    });
    expect(caller.reasoning_content).toBe("I should use the calculate tool for 17 * (4 + 5).");
    expect(doc.steps[3]).toMatchObject({
      message: "The result is \\boxed{153}.",
      reasoning_content: "The tool returned 153.",
    });
  });

  it("carries the reward, termination reason and per-step rewards in extra", () => {
    expect(doc.extra).toMatchObject({
      reward: 1,
      termination_reason: "ENV_DONE",
      status: "succeeded",
      conversation_source: "llm_calls",
    });
    expect(doc.steps.at(-1)?.extra).toMatchObject({
      step_reward: 1,
      step_done: true,
      rollout_step_id: "r-a/step/3",
    });
    expect(doc.final_metrics).toMatchObject({
      total_steps: 7,
      total_completion_tokens: talk.calls.reduce((n, call) => n + call.usage.completion_tokens, 0),
    });
  });

  it("exports an external rollout from its calls and final messages without repeating turns", async () => {
    const ext = await externalAgent(sim, "r-ext");
    const view = viewOf("r-ext", ext.calls, {
      agent: "external",
      reward: 0.5,
      final_messages: ext.messages,
    });
    const out = toAtif(view) as Doc;
    expect(validateAtif(out)).toEqual([]);
    expect(out.steps.map((step) => step.source)).toEqual(["user", "agent", "agent"]);
    expect(out.steps.some((step) => step.is_copied_context)).toBe(false);
    expect(out.steps[1]?.observation?.results[0]?.content).toBe("42");
    expect(out.extra).toMatchObject({ reward: 0.5, conversation_source: "llm_calls" });
  });

  it("falls back to the final messages when a rollout has no calls", async () => {
    const view = viewOf("r-msg", [], {
      agent: "external",
      final_messages: talk.messages,
      reward: null,
    });
    const out = toAtif(view) as Doc;
    expect(validateAtif(out)).toEqual([]);
    expect(out.steps.map((step) => step.source)).toEqual([
      "system",
      "user",
      "agent",
      "agent",
      "user",
      "agent",
      "agent",
    ]);
    expect(out.steps[2]).not.toHaveProperty("metrics");
    expect(out.steps[2]?.observation?.results[0]?.source_call_id).toBe(
      out.steps[2]?.tool_calls[0]?.tool_call_id,
    );
    expect(out.extra).toMatchObject({ reward: null, conversation_source: "final_messages" });
  });

  it("exports an untrainable call without logprobs and re-sent history as copied context", () => {
    const [first, second] = talk.calls as [LlmCall, LlmCall];
    const untrainable = {
      ...first,
      logprobs: [],
      logprobs_mode: "none" as const,
      trainable: false,
    };
    // The second call's prompt rewrites the first user turn, as an agent that edits its history would.
    const messages = (second.request.messages as JsonObject[]).map((m, i) =>
      i === 1 ? { ...m, content: "What is 17 * 9?" } : m,
    );
    const rewritten = { ...second, request: { ...second.request, messages } };
    const out = toAtif(viewOf("r-c", [untrainable, rewritten])) as Doc;
    expect(validateAtif(out)).toEqual([]);
    expect(out.steps[2]?.metrics).not.toHaveProperty("logprobs");
    expect(out.steps.filter((step) => step.is_copied_context).map((step) => step.source)).toEqual([
      "user",
      "agent",
    ]);
  });

  it("exports a rollout that never called the model as a valid empty trajectory", () => {
    const out = toAtif(
      viewOf("r-0", [], { status: "failed", termination_reason: "AGENT_ERROR", reward: null }),
    ) as Doc;
    expect(validateAtif(out)).toEqual([]);
    expect(out.steps).toEqual([]);
    expect(out.extra).toMatchObject({
      status: "failed",
      termination_reason: "AGENT_ERROR",
      conversation_source: "none",
    });
  });
});
