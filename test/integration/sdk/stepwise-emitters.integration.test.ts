/**
 * Integration: Agent-lightning's emitters in a BaseAgent/BaseEnv agent (issue 15). What the env
 * and the agent emit during a step is committed with the step and shows in the rollout's spans,
 * in order; the rollout's reward still comes from the env.
 */
import { describe, expect, it } from "vitest";
import { defineAgent } from "../../../src/sdk/agent-registry";
import { emitObject, emitReward } from "../../../src/sdk/emitters";
import type { EnvStepResult } from "../../../src/sdk/base-env";
import type { ModelResponse } from "../../../src/sdk/model-response";
import type { Action } from "../../../src/schemas/action";
import { EchoAgent, LoopEnv } from "../../fixtures/test-agents";
import { runRollout, uniqueId } from "../../fixtures/rollouts";

/** Emits a shaped reward for every step it runs. */
class EmittingEnv extends LoopEnv {
  override async step(): Promise<EnvStepResult> {
    const result = await super.step();
    emitReward({ format: 1, progress: this.turn / 3 }, { primaryKey: "progress", name: "shaped" });
    return result;
  }
}

/** Emits what it decided on each step. */
class EmittingAgent extends EchoAgent {
  override updateFromModel(response: ModelResponse): Action {
    const action = super.updateFromModel(response);
    emitObject({ chars: response.text.length }, { name: "decision" });
    return action;
  }
}

defineAgent({ name: "test-stepwise-emitters", envClass: EmittingEnv, agentClass: EmittingAgent });

describe("emitters in a stepwise agent", () => {
  it("commits each step's emitted spans with the step, in order, and keeps the env's reward", async () => {
    const view = await runRollout({
      agent: "test-stepwise-emitters",
      rollout_id: uniqueId("emit-stepwise"),
      task: { problem: "Say hello.", extra_args: { done_after: 3 } },
    });
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "ENV_DONE", reward: 1 });
    const emitted = view.spans.filter((span) => span.name === "decision" || span.name === "shaped");
    expect(emitted.map((span) => span.name)).toEqual([
      "decision",
      "shaped",
      "decision",
      "shaped",
      "decision",
      "shaped",
    ]);
    expect(emitted.filter((span) => span.name === "shaped").map((span) => span.value)).toEqual(
      [1 / 3, 2 / 3, 1].map((progress) => ({ format: 1, progress })),
    );
    expect(emitted.map((span) => span.kind)).toEqual([
      "object",
      "reward",
      "object",
      "reward",
      "object",
      "reward",
    ]);
  });
});
