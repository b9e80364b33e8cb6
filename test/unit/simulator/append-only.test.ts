import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EOS_TOKEN_ID, type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { CALCULATOR_TOOL, postJson } from "./simulator-fixtures";

type Message = Record<string, unknown>;

/** Runs a 3-turn calculator conversation and returns each call's prompt and completion ids. */
async function converse(
  sim: VllmSimulator,
): Promise<Array<{ prompt: number[]; completion: number[]; finish: string }>> {
  const messages: Message[] = [
    { role: "system", content: "You are a calculator agent." },
    { role: "user", content: "What is 17 * (4 + 5)?" },
  ];
  const calls: Array<{ prompt: number[]; completion: number[]; finish: string }> = [];
  const step = async (): Promise<void> => {
    const reply = await postJson(`${sim.url}/v1/chat/completions`, {
      messages,
      tools: [CALCULATOR_TOOL],
      return_token_ids: true,
      seed: 11,
    });
    expect(reply.status).toBe(200);
    const choice = reply.body.choices[0];
    calls.push({
      prompt: reply.body.prompt_token_ids,
      completion: choice.token_ids,
      finish: choice.finish_reason,
    });
    messages.push({
      role: "assistant",
      content: choice.message.content,
      tool_calls: choice.message.tool_calls,
    });
  };
  await step(); // tool call
  messages.push({ role: "tool", tool_call_id: "call-1", content: "153" });
  await step(); // answer
  messages.push({ role: "user", content: "And 3 + 4?" });
  await step(); // tool call again
  return calls;
}

describe("append-only chat template", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, thinking: true, successRate: 1 });
  });
  afterAll(() => sim.close());

  it("starts every prompt with the previous prompt and completion ids", async () => {
    const calls = await converse(sim);
    expect(calls.map((call) => call.finish)).toEqual(["tool_calls", "stop", "tool_calls"]);
    for (let i = 1; i < calls.length; i++) {
      const previous = calls[i - 1] as (typeof calls)[number];
      expect(previous.completion.at(-1)).toBe(EOS_TOKEN_ID);
      const prefix = [...previous.prompt, ...previous.completion];
      expect(calls[i]?.prompt.slice(0, prefix.length)).toEqual(prefix);
    }
  });

  it("breaks the prefix property when history loses its <think> blocks", async () => {
    sim.configure({ stripThinkInHistory: true });
    try {
      const calls = await converse(sim);
      const [first, second] = calls as [(typeof calls)[number], (typeof calls)[number]];
      const prefix = [...first.prompt, ...first.completion];
      expect(second.prompt.slice(0, prefix.length)).not.toEqual(prefix);
      expect(second.prompt.slice(0, first.prompt.length)).toEqual(first.prompt);
    } finally {
      sim.configure({ stripThinkInHistory: false });
    }
  });
});
