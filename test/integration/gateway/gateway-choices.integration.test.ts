import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { createExternal, openaiFor } from "../../fixtures/external-rollouts";
import { getRollout } from "../../fixtures/rollouts";

const messages = [{ role: "user" as const, content: "Say something." }];

describe("several choices through the rollout gateway with the real openai client (integration)", () => {
  it("refuses n > 1 in train mode with a 422 problem naming n, and records nothing", async () => {
    const rollout = await createExternal();
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const error = await client.chat.completions.create({ model: "any", messages, n: 3 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    const problem = (error as InstanceType<typeof OpenAI.UnprocessableEntityError>).error as {
      message: string;
    };
    expect(problem.message).toContain("n must be 1 in training mode");
    expect((await getRollout(rollout.rollout_id)).llm_calls).toEqual([]);
  });

  it("passes every choice through in val mode and records choice 0", async () => {
    const rollout = await createExternal({ mode: "val" });
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const completion = await client.chat.completions.create({ model: "any", messages, n: 2 });
    expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1]);
    const [call] = (await getRollout(rollout.rollout_id)).llm_calls;
    expect(call!.response_message.content).toBe(completion.choices[0]!.message.content);
    expect(call!.usage.completion_tokens).toBe(completion.usage!.completion_tokens);
  });
});
