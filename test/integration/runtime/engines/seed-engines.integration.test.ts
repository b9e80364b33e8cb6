/** Integration: a user engine registered by name runs over HTTP, and every agent style's SSE stream shows its attempts and steps. */
import { describe, expect, it } from "vitest";
import "../../../fixtures/authoring-agents";
import "../../../fixtures/seed-agents";
import { api, runRollout, uniqueId } from "../../../fixtures/rollouts";

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

async function frames(rolloutId: string): Promise<Frame[]> {
  const text = await (await api(`/v1/rollouts/${rolloutId}/events`)).text();
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "" && !block.startsWith(":"))
    .map((block) => {
      const fields = new Map(
        block
          .split("\n")
          .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
      );
      return {
        event: fields.get("event") ?? "message",
        data: JSON.parse(fields.get("data") ?? "null") as Record<string, unknown>,
      };
    });
}

describe("pluggable engines and the engine stream (integration)", () => {
  it("runs an agent on a user engine registered by name, its streamed steps on the rollout's SSE stream", async () => {
    const view = await runRollout({
      agent: "seed-custom-engine",
      rollout_id: uniqueId("eng-custom"),
      task: { problem: "three questions" },
    });
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      reward: 1 + 2 + 3,
      attempts: 1,
    });
    expect(view.llm_calls).toHaveLength(3);
    const seen = await frames(view.rollout_id);
    expect(seen.map((frame) => frame.event)).toEqual([
      "attempt",
      "step",
      "step",
      "step",
      "span",
      "attempt",
      "end",
    ]);
    expect(
      seen
        .filter((frame) => frame.event === "step")
        .map((frame) => (frame.data.step as { reward: number }).reward),
    ).toEqual([1, 2, 3]);
    expect(seen[0]!.data).toMatchObject({ attempt: 1, phase: "started" });
    expect(seen[5]!.data).toMatchObject({ attempt: 1, phase: "ended", outcome: "succeeded" });
    expect((seen[4]!.data as { name: string; value: unknown }).value).toEqual({
      task_id: view.rollout_id,
      turns: "done",
    });
  });

  it("fails a rollout whose agent names an engine that is not registered, naming it", async () => {
    const view = await runRollout({
      agent: "seed-missing-engine",
      rollout_id: uniqueId("eng-missing"),
      task: { problem: "x" },
    });
    expect(view).toMatchObject({ status: "failed", termination_reason: "AGENT_ERROR" });
    expect(view.error).toContain('engine "not-registered", which is not registered');
  });

  it("shows attempt events on the SSE stream of a function agent too", async () => {
    const view = await runRollout({
      agent: "authoring-fn-emit",
      rollout_id: uniqueId("eng-fn"),
      task: { problem: "Say hi.", extra_args: { reward: 0.5 } },
    });
    const seen = await frames(view.rollout_id);
    expect(
      seen.filter((frame) => frame.event === "attempt").map((frame) => frame.data.phase),
    ).toEqual(["started", "ended"]);
    expect(seen.at(-1)!.event).toBe("end");
  });
});
