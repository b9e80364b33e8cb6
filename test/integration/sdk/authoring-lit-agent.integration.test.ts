/** Integration: LitAgent classes through `POST /v1/rollouts`, chosen by the rollout's mode. */
import { describe, expect, it } from "vitest";
import { gradeBoxedAnswer } from "../../../src/agents/grading";
import { messageText } from "../../../src/schemas/chat";
import "../../fixtures/authoring-agents";
import { runRollout, uniqueId } from "../../fixtures/rollouts";

const math = { problem: "What is 12 + 30?", ground_truth: "42" };
const annotationOf = (view: Awaited<ReturnType<typeof runRollout>>) =>
  view.spans.find((span) => span.kind === "annotation" && span.name === "annotation")?.value;

describe("LitAgent classes (integration)", () => {
  it("runs trainingRollout in train mode and takes the returned reward", async () => {
    const view = await runRollout({
      agent: "authoring-lit",
      rollout_id: uniqueId("lit-train"),
      task: math,
    });
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      final_attempt: 1,
    });
    expect(annotationOf(view)).toEqual({ method: "trainingRollout", mode: "train" });
    expect(view.llm_calls).toHaveLength(1);
    expect(view.reward).toBe(
      gradeBoxedAnswer(messageText(view.llm_calls[0]!.response_message), "42"),
    );
  });

  it("runs validationRollout in val mode and takes the emitted reward", async () => {
    const view = await runRollout({
      agent: "authoring-lit",
      rollout_id: uniqueId("lit-val"),
      task: math,
      config: { mode: "val" },
    });
    expect(view).toMatchObject({ status: "succeeded", final_attempt: 1 });
    expect(annotationOf(view)).toEqual({ method: "validationRollout", mode: "val" });
    expect(view.reward).toBe(
      gradeBoxedAnswer(messageText(view.llm_calls[0]!.response_message), "42"),
    );
    expect(view.spans.filter((span) => span.kind === "reward")).toHaveLength(1);
  });
});
