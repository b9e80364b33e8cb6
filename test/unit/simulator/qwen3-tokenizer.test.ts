import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type VllmSimulator,
  decodeIds,
  startVllmSimulator,
  tokenText,
  tokenizerFor,
} from "../../../tools/simulator";
import { CALCULATOR_TOOL, postJson } from "./simulator-fixtures";

const IM_START = 151644;
const THINK = 151667;
const END_THINK = 151668;
const TOOL_CALL = 151657;

describe("the simulator with Qwen3's tokenizer and chat template", () => {
  let sim: VllmSimulator;
  const qwen3 = tokenizerFor("qwen3");
  beforeAll(async () => {
    sim = await startVllmSimulator({
      port: 0,
      seed: 3,
      successRate: 1,
      maxModelLen: 4096,
      tokenizer: "qwen3",
    });
  });
  afterAll(() => sim.close());

  it("tokenizes a prompt into Qwen3's ids, with vocabulary strings as token_strs, and detokenizes it back", async () => {
    const tokenized = await postJson(`${sim.url}/tokenize`, {
      prompt: "What is 6 * 7?",
      return_token_strs: true,
    });
    expect(tokenized.body).toEqual({
      count: 8,
      max_model_len: 4096,
      tokens: [3838, 374, 220, 21, 353, 220, 22, 30],
      token_strs: ["What", "Ġis", "Ġ", "6", "Ġ*", "Ġ", "7", "?"],
    });
    expect(
      (await postJson(`${sim.url}/detokenize`, { tokens: [3838, 374, THINK, 21] })).body,
    ).toEqual({ prompt: "What is<think>6" });
    expect((await postJson(`${sim.url}/detokenize`, { tokens: [qwen3.vocabSize] })).status).toBe(
      400,
    );
  });

  it("renders a chat with Qwen3's template, exactly as the chat call's prompt_token_ids", async () => {
    const request = {
      messages: [{ role: "user", content: "What is 6 * 7?" }],
      tools: [CALCULATOR_TOOL],
    };
    const tokenized = await postJson(`${sim.url}/tokenize`, {
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(tokenized.body.tokens.slice(0, 3)).toEqual([IM_START, 872, 198]);
    const withTools = await postJson(`${sim.url}/tokenize`, request);
    const chat = await postJson(`${sim.url}/v1/chat/completions`, {
      ...request,
      return_token_ids: true,
    });
    expect(chat.body.prompt_token_ids).toEqual(withTools.body.tokens);
    expect(chat.body.prompt_text).toContain(
      '<tools>\n{"type": "function", "function": {"name": "calculate", "description": "Evaluate an arithmetic expression.", "parameters": {"type": "object"',
    );
    // The model writes a hermes call in Qwen3's own form; the parser hands it out as a tool call.
    expect(chat.body.choices[0].token_ids[0]).toBe(TOOL_CALL);
    expect(chat.body.choices[0].message.tool_calls[0].function).toEqual({
      name: "calculate",
      arguments: '{"expression": "6 * 7"}',
    });
  });

  it("closes the think block in the prompt when enable_thinking is false, and answers without one", async () => {
    const body = {
      messages: [{ role: "user", content: "What is 6 * 7? /think" }],
      return_token_ids: true,
      chat_template_kwargs: { enable_thinking: false },
    };
    const chat = await postJson(`${sim.url}/v1/chat/completions`, body);
    expect(chat.body.prompt_token_ids.slice(-4)).toEqual([THINK, 271, END_THINK, 271]);
    expect(chat.body.choices[0].token_ids).not.toContain(THINK);
    const thinking = await postJson(`${sim.url}/v1/chat/completions`, {
      ...body,
      chat_template_kwargs: {},
    });
    expect(thinking.body.choices[0].message.content).toMatch(
      /^<think>\nI need to evaluate 6 \* 7\.\n<\/think>\n\n6 \* 7 = 42/,
    );
  });

  it("drops the <think> of turns before the last user query when rendering history, and keeps it after", async () => {
    const reply = "<think>\nI need to evaluate 6 * 7.\n</think>\n\n42";
    const earlier = [
      { role: "user", content: "What is 6 * 7?" },
      { role: "assistant", content: reply },
      { role: "user", content: "And 2 + 2?" },
    ];
    const dropped = decodeIds(
      qwen3,
      (await postJson(`${sim.url}/tokenize`, { messages: earlier })).body.tokens,
    );
    expect(dropped).toContain("<|im_start|>assistant\n42<|im_end|>");
    const call = {
      role: "assistant",
      content: "<think>\nUse the tool.\n</think>\n\n",
      tool_calls: [
        {
          id: "c1",
          type: "function",
          function: { name: "calculate", arguments: '{"expression": "6 * 7"}' },
        },
      ],
    };
    const kept = decodeIds(
      qwen3,
      (
        await postJson(`${sim.url}/tokenize`, {
          messages: [earlier[0], call, { role: "tool", tool_call_id: "c1", content: "42" }],
        })
      ).body.tokens,
    );
    expect(kept).toContain(
      '<|im_start|>assistant\n<think>\nUse the tool.\n</think>\n\n<tool_call>\n{"name": "calculate", "arguments": {"expression": "6 * 7"}}\n</tool_call><|im_end|>',
    );
  });

  it("splits reasoning and tool calls like vLLM's qwen3 and hermes parsers, streamed or not", async () => {
    sim.configure({ reasoningParser: true, thinking: true });
    try {
      const body = {
        messages: [{ role: "user", content: "What is 6 * 7?" }],
        tools: [CALCULATOR_TOOL],
      };
      const whole = (await postJson(`${sim.url}/v1/chat/completions`, body)).body.choices[0];
      expect(whole).toMatchObject({
        finish_reason: "tool_calls",
        message: { reasoning: "\nI should use the calculate tool for 6 * 7.\n", content: "\n\n" },
      });
      expect(whole.message.tool_calls).toHaveLength(1);
      // Thinking on, no </think> (cut off by max_tokens): all of it is reasoning, as the current parser reads it.
      const cut = (
        await postJson(`${sim.url}/v1/chat/completions`, {
          ...body,
          tools: undefined,
          max_tokens: 4,
        })
      ).body.choices[0];
      expect(cut).toMatchObject({ finish_reason: "length", message: { content: null } });
      expect(cut.message.reasoning).toBe("\nI need");
    } finally {
      sim.configure({ reasoningParser: false, thinking: false });
    }
  });

  it("gives each logprob the text of its token alone, as vLLM's decode([id]) does", async () => {
    const chat = (
      await postJson(`${sim.url}/v1/chat/completions`, {
        messages: [{ role: "user", content: "Say ✓ please" }],
        logprobs: true,
        top_logprobs: 2,
        return_token_ids: true,
      })
    ).body.choices[0];
    const ids: number[] = chat.token_ids;
    expect(chat.logprobs.content.map((entry: { token: string }) => entry.token)).toEqual(
      ids.map((id) => tokenText(qwen3, id)),
    );
    expect(chat.logprobs.content[0].bytes).toEqual(
      Array.from(new TextEncoder().encode(chat.logprobs.content[0].token)),
    );
    expect(chat.logprobs.content.at(-1).token).toBe("<|im_end|>");
  });

  it("answers vLLM's 400s for a prompt past the context window and history tool arguments that are not JSON", async () => {
    const long = await postJson(`${sim.url}/v1/chat/completions`, {
      messages: [{ role: "user", content: "word ".repeat(5000) }],
    });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(
      /^This model's maximum context length is 4096 tokens\. However, you requested 0 output tokens and your prompt contains 50\d\d input tokens/,
    );
    const call = {
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "calculate", arguments: "6 * 7" } },
      ],
    };
    const bad = await postJson(`${sim.url}/v1/chat/completions`, {
      messages: [
        { role: "user", content: "Hi" },
        call,
        { role: "tool", tool_call_id: "c1", content: "42" },
      ],
    });
    expect(bad).toEqual({
      status: 400,
      body: {
        error: {
          message: "Extra data: line 1 column 3 (char 2) None",
          type: "BadRequestError",
          param: null,
          code: 400,
        },
      },
    });
  });
});
