/** Integration: what Osmosis users expect of workflows: `info`, the row's whole chat, judge calls, concurrency limits. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RolloutRecord } from "../../../src/sink/publication/rollout-record";
import { rolloutRecordKey } from "../../../src/sink/publication/r2-keys";
import { batchRollouts, postBatch, waitForBatch } from "../../fixtures/datasets/batch-api";
import { judgeSaid, limitedRuns, promptSeen } from "../../fixtures/osmosis-agents";
import { getRollout, runRollout, uniqueId, waitFor } from "../../fixtures/rollouts";

const SYSTEM = "You are a careful calculator. Put the answer in \\boxed{}.";
const row = (index: number) => ({
  prompt: [
    { role: "system", content: SYSTEM },
    { role: "user", content: `What is ${index} + 2?` },
  ],
  reward_model: { ground_truth: String(index + 2) },
  extra_info: { index },
});

describe("Osmosis workflows (integration)", () => {
  it("accepts AgentWorkflowOutput.info and keeps it as the rollout's info span", async () => {
    const view = await runRollout({
      agent: "osmosis-judged",
      rollout_id: uniqueId("osm-info"),
      task: { problem: "What is 2 + 2?", ground_truth: "4" },
    });
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "ENV_DONE" });
    expect(view.spans.find((span) => span.name === "info")).toMatchObject({
      kind: "annotation",
      value: { source: "osmosis-judged", configured_by: "answers once; a judge looks at it" },
    });
  });

  it("records the grader's judge call apart and never trains on it", async () => {
    const view = await runRollout({
      agent: "osmosis-judged",
      rollout_id: uniqueId("osm-judge"),
      task: { problem: "What is 2 + 2?", ground_truth: "4" },
    });
    expect(view.llm_calls.map((call) => call.purpose)).toEqual(["policy", "judge"]);
    const [policy, judge] = view.llm_calls;
    expect(judge).toMatchObject({ excluded_from_training: true, attempt: 1 });
    expect(messageOf(judge!)).toBe(judgeSaid.get(view.rollout_id));
    expect(policy!.excluded_from_training).toBe(false);
    // The judge call is no step, and the stored samples are cut from the policy call alone.
    expect(view.trajectory.steps.flatMap((step) => step.llm_call_ids)).toEqual([policy!.call_id]);
    const record = await waitFor(
      "the rollout record",
      async () =>
        (await env.TRAJECTORIES.get(rolloutRecordKey(view.rollout_id)))?.json() as
          Promise<RolloutRecord> | undefined,
    );
    expect(record.samples.flatMap((sample) => sample.extra_fields.calls as string[])).toEqual([
      policy!.call_id,
    ]);
    expect(record.samples[0]!.extra_fields.untrainable_calls).toBe(1);
  });

  it("gives a workflow a batch row's whole chat as ctx.prompt, its system message included", async () => {
    const batchId = uniqueId("osm-chat");
    expect(
      (await postBatch({ batch_id: batchId, agent: "osmosis-judged", rows: [row(1)], n: 1 }))
        .status,
    ).toBe(202);
    expect((await waitForBatch(batchId)).counts.succeeded).toBe(1);
    const [entry] = await batchRollouts(batchId);
    expect(promptSeen.get("1")).toEqual([
      { role: "system", content: SYSTEM },
      { role: "user", content: "What is 1 + 2?" },
    ]);
    const view = await getRollout(entry!.rollout_id);
    expect((view.llm_calls[0]!.request.messages as Array<{ role: string }>)[0]!.role).toBe(
      "system",
    );
  });

  it("keeps a batch of a workflow within its config's concurrency.max_concurrent", async () => {
    const batchId = uniqueId("osm-limit");
    limitedRuns.peak = 0;
    const response = await postBatch({
      batch_id: batchId,
      agent: "osmosis-limited",
      rows: [0, 1, 2, 3, 4, 5].map(row),
      n: 1,
      max_concurrent: 50,
    });
    expect(response.status).toBe(202);
    const final = await waitForBatch(batchId, 60_000);
    expect(final).toMatchObject({ max_concurrent: 2, rollouts: 6 });
    expect(final.counts.succeeded).toBe(6);
    // Exactly the limit: two at once (each waits for a partner), never a third.
    expect(limitedRuns.peak).toBe(2);
  }, 70_000);
});

function messageOf(call: { response_message: { content?: unknown } }): string {
  return typeof call.response_message.content === "string" ? call.response_message.content : "";
}
