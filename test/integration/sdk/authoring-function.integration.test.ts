/** Integration: function agents (`rollout(...)`, `defineRollout(...)`) through `POST /v1/rollouts`, against the simulator. */
import { describe, expect, it } from "vitest";
import { gradeBoxedAnswer } from "../../../src/agents/grading";
import { messageText } from "../../../src/schemas/chat";
import "../../fixtures/authoring-agents";
import { api, runRollout, trainingCalls, uniqueId } from "../../fixtures/rollouts";

const math = { problem: "What is 6 * 7?", ground_truth: "42" };

describe("function agents (integration)", () => {
  it("runs a rollout(...) agent end to end: its calls are recorded and its returned number is the reward", async () => {
    const view = await runRollout({
      agent: "authoring-fn-math",
      rollout_id: uniqueId("fn-math"),
      task: math,
    });
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      attempts: 1,
      final_attempt: 1,
    });
    expect(view.llm_calls).toHaveLength(1);
    const [call] = view.llm_calls;
    expect(call).toMatchObject({ attempt: 1, excluded_from_training: false, trainable: true });
    expect(call!.completion_token_ids.length).toBeGreaterThan(0);
    expect(view.reward).toBe(gradeBoxedAnswer(messageText(call!.response_message), "42"));
    expect(view.spans.find((span) => span.name === "final_reward")).toMatchObject({
      kind: "reward",
      value: view.reward,
      attributes: { attempt: 1 },
    });
    // The trajectory reads like a stepwise one: a step per model call of the final attempt.
    expect(view.trajectory.steps).toHaveLength(1);
    expect(view.trajectory.steps[0]).toMatchObject({
      llm_call_ids: [call!.call_id],
      reward: view.reward,
      done: true,
    });
    expect(trainingCalls(view)).toHaveLength(1);
  });

  it("formats the declared prompt template's default and records that the default was used", async () => {
    const view = await runRollout({
      agent: "authoring-fn-math",
      rollout_id: uniqueId("fn-default"),
      task: math,
    });
    const prompt = (view.llm_calls[0]!.request.messages as Array<{ content: string }>)[0]!.content;
    expect(prompt).toBe("Solve: What is 6 * 7?\nPut the final answer in \\boxed{}.");
    expect(view.spans.find((span) => span.name === "resources")).toMatchObject({
      kind: "annotation",
      value: { promptTemplate: "default" },
    });
    expect(view.resource_versions).toEqual({ authoring_prompt: "default" });
  });

  it("uses the policy's latest version of the resource and records its version", async () => {
    const put = await api("/v1/resources/authoring_prompt", {
      method: "PUT",
      body: JSON.stringify({
        template: "Question: {problem} Answer in \\boxed{{}}.",
        engine: "f-string",
      }),
    });
    expect(put.status).toBe(201);
    const { id } = (await put.json()) as { id: string };
    const view = await runRollout({
      agent: "authoring-fn-math",
      rollout_id: uniqueId("fn-versioned"),
      task: math,
    });
    expect((view.llm_calls[0]!.request.messages as Array<{ content: string }>)[0]!.content).toBe(
      "Question: What is 6 * 7? Answer in \\boxed{}.",
    );
    expect(view.spans.find((span) => span.name === "resources")!.value).toEqual({
      promptTemplate: id,
    });
    // On the rollout itself, by the resource's stored name.
    expect(view.resource_versions).toEqual({ authoring_prompt: id });
  });

  it("takes the reward from the emitted reward when the function returns nothing", async () => {
    const view = await runRollout({
      agent: "authoring-fn-emit",
      rollout_id: uniqueId("fn-emit"),
      task: { problem: "Say hi.", extra_args: { reward: 0.75 } },
    });
    expect(view).toMatchObject({ status: "succeeded", reward: 0.75 });
    expect(view.spans.filter((span) => span.kind === "reward")).toEqual([
      expect.objectContaining({
        value: { score: 0.75, constant: 1 },
        attributes: { primary_key: "score", attempt: 1 },
      }),
    ]);
  });

  it("adds a returned list of spans and takes the reward from its last reward span", async () => {
    const view = await runRollout({
      agent: "authoring-fn-spans",
      rollout_id: uniqueId("fn-spans"),
      task: { problem: "Say hi." },
    });
    expect(view).toMatchObject({ status: "succeeded", reward: 0.5 });
    // The attempt's start and end are spans too (they are what the SSE stream shows as `attempt` events).
    expect(view.spans.map((span) => [span.sequence_id, span.kind, span.name])).toEqual([
      [1, "annotation", "attempt"],
      [2, "annotation", "note"],
      [3, "reward", "span"],
      [4, "annotation", "attempt"],
    ]);
  });

  it("fails AGENT_ERROR without a retry when the function returns NaN", async () => {
    const view = await runRollout({
      agent: "authoring-fn-flaky",
      rollout_id: uniqueId("fn-nan"),
      task: { ...math, extra_args: { return_nan: true } },
    });
    expect(view).toMatchObject({
      status: "failed",
      termination_reason: "AGENT_ERROR",
      reward: null,
      attempts: 1,
    });
    expect(view.error).toBe(
      'rollout function "authoring-fn-flaky" returned NaN; return a finite number (the reward), nothing (the last emitted reward counts), or a list of spans',
    );
  });

  it("lists every authoring style among the registered agents", async () => {
    const { agents } = (await (await api("/v1/agents")).json()) as { agents: string[] };
    expect(agents).toEqual(
      expect.arrayContaining(["authoring-fn-math", "authoring-lit", "authoring-workflow", "math"]),
    );
  });
});
