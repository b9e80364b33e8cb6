/** Integration: workflows and graders (Osmosis style) through `POST /v1/rollouts`. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { gradeBoxedAnswer } from "../../../src/agents/grading";
import { messageText } from "../../../src/schemas/chat";
import { workflowSaw, type WorkflowOutputKind } from "../../fixtures/authoring-agents";
import { runRollout, uniqueId } from "../../fixtures/rollouts";

const run = (output: WorkflowOutputKind, extra: Record<string, unknown> = {}) =>
  runRollout({
    agent: "authoring-workflow",
    rollout_id: uniqueId(`wf-${output}`),
    task: { problem: "What is 9 * 9?", ground_truth: "81", extra_args: { output, ...extra } },
  });

describe("workflows and graders (integration)", () => {
  it("runs a workflow end to end: its output is kept, its grader scores it, its artifact is in R2", async () => {
    const view = await run("output");
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      final_attempt: 1,
    });
    const answer = messageText(view.llm_calls[0]!.response_message);
    expect(view.reward).toBe(gradeBoxedAnswer(answer, "81"));
    expect(view.final_messages).toEqual([
      { role: "user", content: "What is 9 * 9?" },
      { role: "assistant", content: answer },
    ]);
    expect(view.spans.find((span) => span.name === "metrics")!.value).toEqual({
      answer_chars: answer.length,
      style_brief: 1,
    });
    expect(view.spans.find((span) => span.name === "grader")).toMatchObject({
      kind: "reward",
      value: view.reward,
    });
    const artifact = await env.TRAJECTORIES.get(`rollouts/${view.rollout_id}/artifacts/answer.txt`);
    expect(await artifact?.text()).toBe(answer);
  });

  it("never shows the label to the workflow", async () => {
    const view = await run("output");
    const saw = workflowSaw.get(view.rollout_id)!;
    expect(saw.keys).toEqual([
      "artifacts",
      "config",
      "heartbeat",
      "llm",
      "metadata",
      "prompt",
      "resources",
      "rollout",
      "signal",
    ]);
    expect(saw.metadata).toEqual({ output: "output", task_id: view.rollout_id });
    // The task id is a random suffix that may itself contain "81": only the other fields are checked.
    expect(JSON.stringify({ ...saw.metadata, task_id: null })).not.toContain("81");
  });

  it("grades the last recorded model call when the workflow returns nothing", async () => {
    const view = await run("nothing");
    expect(view).toMatchObject({ status: "succeeded", final_messages: null });
    expect(view.reward).toBe(
      gradeBoxedAnswer(messageText(view.llm_calls[0]!.response_message), "81"),
    );
  });

  it("accepts a plain message list", async () => {
    const view = await run("messages");
    expect(view).toMatchObject({ status: "succeeded" });
    expect(view.final_messages).toHaveLength(2);
  });

  it("fails the rollout, naming the metric, when the output has a NaN metric", async () => {
    const view = await run("nan_metric");
    expect(view).toMatchObject({
      status: "failed",
      termination_reason: "AGENT_ERROR",
      reward: null,
      attempts: 1,
    });
    expect(view.error).toBe(
      'workflow "authoring-workflow" returned an invalid AgentWorkflowOutput: metrics.x: a metric must be a finite number (got NaN)',
    );
  });

  it("fails the rollout, naming the field, when the output has an unknown top-level field", async () => {
    const view = await run("unknown_field");
    expect(view).toMatchObject({
      status: "failed",
      termination_reason: "AGENT_ERROR",
      attempts: 1,
    });
    expect(view.error).toBe(
      'workflow "authoring-workflow" returned an invalid AgentWorkflowOutput: (output): Unrecognized key: "extra"',
    );
  });

  it("fails the rollout when the grader sets an infinite reward", async () => {
    const view = await run("output", { grader: "infinite" });
    expect(view).toMatchObject({
      status: "failed",
      termination_reason: "AGENT_ERROR",
      reward: null,
      attempts: 1,
    });
    expect(view.error).toBe(
      "grader BoxedGrader set the reward to Infinity; a reward must be a finite number",
    );
  });
});
