import { describe, expect, it } from "vitest";
import {
  chatChoiceOf,
  chatChunk,
  chatCompletionOf,
  chatLogprobs,
} from "../../../src/gateway/openai-chat";
import { LlmCall } from "../../../src/schemas/llm-call";
import { llmCallInput } from "../../fixtures/llm-calls";

const call = LlmCall.parse(llmCallInput({ created_at: 1_700_000_000_500 }));

describe("openai-chat", () => {
  it("writes each sampled logprob as a content entry, a null one as 0", () => {
    expect(chatLogprobs([-0.5, null])).toEqual({
      content: [
        { token: "", logprob: -0.5, bytes: [], top_logprobs: [] },
        { token: "", logprob: 0, bytes: [], top_logprobs: [] },
      ],
    });
  });

  it("rewrites a completions choice as a chat chunk, usage only when asked", () => {
    const head = { id: "chatcmpl-1", created: 7, model: "policy" };
    const choice = {
      text: "x",
      token_ids: [5],
      finish_reason: "stop",
      logprobs: { token_logprobs: [-1] },
    };
    const chunk = JSON.parse(
      chatChunk(head, [chatChoiceOf(choice, { content: "x" }, { stop_reason: null })], {
        promptTokens: 3,
        completionTokens: 1,
      }),
    );
    expect(chunk).toEqual({
      ...head,
      object: "chat.completion.chunk",
      choices: [
        {
          index: 0,
          delta: { content: "x" },
          logprobs: chatLogprobs([-1]),
          finish_reason: "stop",
          stop_reason: null,
          token_ids: [5],
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
    expect(JSON.parse(chatChunk(head, []))).not.toHaveProperty("usage");
  });

  it("answers a recorded call as a chat completion, with vLLM's fields only when full", () => {
    const plain = chatCompletionOf(call);
    expect(plain).toMatchObject({ id: "chatcmpl-a", created: 1_700_000_000, model: "m" });
    expect(Object.keys((plain.choices as object[])[0]!)).toEqual([
      "index",
      "message",
      "finish_reason",
      "token_ids",
    ]);
    expect(plain).not.toHaveProperty("prompt_token_ids");
    const full = chatCompletionOf(call, { full: true });
    expect((full.choices as object[])[0]).toMatchObject({
      logprobs: chatLogprobs([-0.5, -0.25]),
      stop_reason: null,
    });
    expect(full.prompt_token_ids).toEqual([1, 2, 3]);
  });
});
