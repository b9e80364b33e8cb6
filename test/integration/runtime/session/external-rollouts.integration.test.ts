import { describe, expect, it } from "vitest";
import { createExternal, openaiFor } from "../../../fixtures/external-rollouts";
import { api, getRollout, startRollout, waitForEnd } from "../../../fixtures/rollouts";

const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body) });

describe("external rollouts (integration)", () => {
  it("collects reward spans in order and finishes with the last reward and the reported messages", async () => {
    const rollout = await createExternal();
    await openaiFor(rollout.llm.base_url, rollout.llm.api_key).chat.completions.create({
      model: "any",
      messages: [{ role: "user", content: "What is 2 + 2?" }],
    });
    const added = await post(`/v1/rollouts/${rollout.rollout_id}/events`, {
      events: [
        { kind: "reward", value: 0.25 },
        { kind: "annotation", name: "note", value: "ok" },
        { kind: "reward", value: { acc: 0.75, len: 0.1 }, attributes: { primary_key: "acc" } },
      ],
    });
    expect(added.status).toBe(201);
    expect(((await added.json()) as { sequence_ids: number[] }).sequence_ids).toEqual([1, 2, 3]);
    const messages = [
      { role: "user", content: "What is 2 + 2?" },
      { role: "assistant", content: "\\boxed{4}" },
    ];
    expect((await post(`/v1/rollouts/${rollout.rollout_id}/finish`, { messages })).status).toBe(
      200,
    );
    const view = await getRollout(rollout.rollout_id);
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      reward: 0.75,
      final_messages: messages,
    });
    expect(view.spans.map((span) => [span.sequence_id, span.kind])).toEqual([
      [1, "reward"],
      [2, "annotation"],
      [3, "reward"],
    ]);
    expect(view.llm_calls).toHaveLength(1);
  });

  it("rejects a reward that is not a finite number, naming the field", async () => {
    const rollout = await createExternal();
    const response = await post(`/v1/rollouts/${rollout.rollout_id}/events`, {
      events: [{ kind: "reward", value: "high" }],
    });
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { errors: Array<{ path: string }> };
    expect(problem.errors.map((error) => error.path)).toContain("events.0.value");
  });

  it("ends an external rollout left idle past step_timeout_ms with TIMEOUT", async () => {
    const rollout = await createExternal({ step_timeout_ms: 200 });
    const view = await waitForEnd(rollout.rollout_id, 5_000);
    expect(view).toMatchObject({ status: "failed", termination_reason: "TIMEOUT" });
    expect(view.error).toMatch(/no model call or event/);
  });

  it("refuses finish on a rollout a driver runs", async () => {
    const rolloutId = await startRollout({
      agent: "math",
      task: { problem: "What is 1 + 1?", ground_truth: "2" },
    });
    const response = await post(`/v1/rollouts/${rolloutId}/finish`, { reward: 1 });
    expect(response.status).toBe(409);
    await waitForEnd(rolloutId);
  });

  it("clamps max_tokens to the remaining budget and ends the rollout MAX_RESPONSE_LENGTH once it is spent", async () => {
    const rollout = await createExternal({ max_response_length: 12 });
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const messages = [{ role: "user" as const, content: "Tell me a long story about the sea." }];
    // A reply may stop before the budget is spent (the simulator's length varies with what it
    // served before): calls go on, each clamped to what is left, until one is refused.
    const statuses: number[] = [];
    for (let i = 0; i <= 12 && statuses.at(-1) !== 400; i++) {
      statuses.push(
        await client.chat.completions.create({ model: "any", messages, max_tokens: 500 }).then(
          () => 200,
          (error: { status: number }) => error.status,
        ),
      );
    }
    const view = await getRollout(rollout.rollout_id);
    let used = 0;
    for (const call of view.llm_calls) {
      expect(call.request.max_tokens).toBe(12 - used);
      used += call.completion_token_ids.length;
    }
    expect(used).toBe(12);
    expect(statuses).toEqual([...view.llm_calls.map(() => 200), 400]);
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "MAX_RESPONSE_LENGTH" });
  });

  it("refuses a prompt over max_prompt_length without forwarding it and ends MAX_PROMPT_LENGTH", async () => {
    const rollout = await createExternal({ max_prompt_length: 40 });
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const status = await client.chat.completions
      .create({ model: "any", messages: [{ role: "user", content: "word ".repeat(200) }] })
      .then(
        () => 200,
        (error: { status: number }) => error.status,
      );
    const view = await getRollout(rollout.rollout_id);
    expect(status).toBe(400);
    expect(view.llm_calls).toHaveLength(0);
    expect(view).toMatchObject({ termination_reason: "MAX_PROMPT_LENGTH" });
  });
});
