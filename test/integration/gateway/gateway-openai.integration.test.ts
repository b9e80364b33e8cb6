import { describe, expect, it } from "vitest";
import { CALCULATE, createExternal, openaiFor } from "../../fixtures/external-rollouts";
import { getRollout } from "../../fixtures/rollouts";

/** vLLM's extra fields, which the gateway passes through to the caller unchanged. */
interface VllmExtras {
  prompt_token_ids: number[];
  choices: Array<{ token_ids: number[]; logprobs: { content: Array<{ logprob: number }> } }>;
}

describe("the rollout gateway with the real openai client (integration)", () => {
  it("records a non-streaming call with exactly the token ids and logprobs the engine sent", async () => {
    const rollout = await createExternal();
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const completion = await client.chat.completions.create({
      model: "any",
      messages: [{ role: "user", content: "What is 6 * 7?" }],
    });
    const sent = completion as unknown as VllmExtras;
    const [call] = (await getRollout(rollout.rollout_id)).llm_calls;
    expect(call!.prompt_token_ids).toEqual(sent.prompt_token_ids);
    expect(call!.completion_token_ids).toEqual(sent.choices[0]!.token_ids);
    expect(call!.logprobs).toEqual(sent.choices[0]!.logprobs.content.map((entry) => entry.logprob));
    expect(call!.response_message.content).toBe(completion.choices[0]!.message.content);
    expect(call).toMatchObject({
      trainable: true,
      step_id: null,
      finish_reason: "stop",
      backend: "vllm",
    });
  });

  it("passes a stream through and records the call assembled from its chunks", async () => {
    const rollout = await createExternal();
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const stream = await client.chat.completions.create({
      model: "any",
      messages: [{ role: "user", content: "What is 12 + 30?" }],
      stream: true,
    });
    let promptIds: number[] = [];
    const tokenIds: number[] = [];
    const logprobs: number[] = [];
    let text = "";
    for await (const chunk of stream) {
      const extra = chunk as unknown as {
        prompt_token_ids?: number[];
        choices: Array<{ token_ids?: number[] }>;
      };
      if (extra.prompt_token_ids) promptIds = extra.prompt_token_ids;
      tokenIds.push(...(extra.choices[0]?.token_ids ?? []));
      logprobs.push(...(chunk.choices[0]?.logprobs?.content ?? []).map((entry) => entry.logprob));
      text += chunk.choices[0]?.delta.content ?? "";
    }
    const [call] = (await getRollout(rollout.rollout_id)).llm_calls;
    expect(tokenIds.length).toBeGreaterThan(0);
    expect(call).toMatchObject({
      prompt_token_ids: promptIds,
      completion_token_ids: tokenIds,
      logprobs,
      response_message: { content: text },
    });
    expect(call!.request.stream).toBe(true);
  });

  it("records tool calls, streamed or not, as the assistant message the engine produced", async () => {
    const rollout = await createExternal();
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const messages = [
      { role: "user" as const, content: "Use the calculator to compute (3 + 4) * 5." },
    ];
    const plain = await client.chat.completions.create({
      model: "any",
      messages,
      tools: [CALCULATE],
    });
    const stream = await client.chat.completions.create({
      model: "any",
      messages,
      tools: [CALCULATE],
      stream: true,
    });
    const streamedNames: string[] = [];
    for await (const chunk of stream)
      for (const tool of chunk.choices[0]?.delta.tool_calls ?? [])
        if (tool.function?.name) streamedNames.push(tool.function.name);
    const calls = (await getRollout(rollout.rollout_id)).llm_calls;
    expect(calls).toHaveLength(2);
    expect(calls[0]!.response_message.tool_calls).toEqual(plain.choices[0]!.message.tool_calls);
    expect(streamedNames).toEqual(["calculate"]);
    expect(calls[1]!.response_message.tool_calls?.map((tool) => tool.function.name)).toEqual([
      "calculate",
    ]);
    expect(JSON.parse(calls[1]!.response_message.tool_calls![0]!.function.arguments)).toEqual({
      expression: "(3 + 4) * 5",
    });
    expect(calls.map((call) => call.finish_reason)).toEqual(["tool_calls", "tool_calls"]);
  });

  it("lists the policy's model under /models", async () => {
    const rollout = await createExternal();
    const models = await openaiFor(rollout.llm.base_url, rollout.llm.api_key).models.list();
    expect(models.data.map((model) => model.id)).toEqual(["sim-qwen3"]);
  });
});
