/** Integration: what AgentSDK users expect of a stepwise rollout: returns, rewards, thoughts, the final update, env thread safety. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { driverDeps } from "../../../functions/work.consumer";
import { driveRollout } from "../../../src/runtime/driver/drive-rollout";
import { messageText } from "../../../src/schemas/chat";
import { envOverlap, envUpdates } from "../../fixtures/seed-agents";
import { createByHand } from "../../fixtures/hand-session";
import { getRollout, runRollout, uniqueId } from "../../fixtures/rollouts";

describe("AgentSDK stepwise fidelity (integration)", () => {
  it("sets each step's mc_return to the discounted sum of later rewards with the config's gamma, and fills toolcall_reward and res_reward", async () => {
    const view = await runRollout({
      agent: "seed-steps",
      rollout_id: uniqueId("seed-mc"),
      task: { problem: "three questions" },
      config: { gamma: 0.5 },
    });
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "ENV_DONE", reward: 6 });
    const steps = view.trajectory.steps;
    expect(steps.map((step) => step.reward)).toEqual([1, 2, 3]);
    expect(steps.map((step) => step.mc_return)).toEqual([1 + 0.5 * (2 + 0.5 * 3), 2 + 0.5 * 3, 3]);
    expect(view.trajectory).toMatchObject({ toolcall_reward: 0.75, res_reward: 6 });
    const undiscounted = await runRollout({
      agent: "seed-steps",
      rollout_id: uniqueId("seed-mc1"),
      task: { problem: "three questions" },
    });
    expect(undiscounted.trajectory.steps.map((step) => step.mc_return)).toEqual([6, 5, 3]);
  });

  it("reads Step.thought from the <think> block when the server returns no separate reasoning, and the agent's info through getCurrentState", async () => {
    const view = await runRollout({
      agent: "seed-steps",
      rollout_id: uniqueId("seed-think"),
      task: { problem: "three questions" },
    });
    for (const step of view.trajectory.steps) {
      const call = view.llm_calls.find((c) => c.call_id === step.llm_call_ids[0])!;
      expect(call.response_message.reasoning_content ?? null).toBeNull();
      const content = messageText(call.response_message);
      expect(content).toMatch(/^<think>[\s\S]+<\/think>/);
      expect(step.thought).toBe(
        content.slice("<think>".length, content.indexOf("</think>")).trim(),
      );
      expect(step.thought).not.toBe("");
      expect(step.info).toEqual({
        agent_thought_chars: step.thought.length,
        toolcall_reward: 0.25,
      });
    }
  });

  it("gives the agent the final updateFromEnv(…, done = true) before the rollout ends", async () => {
    const view = await runRollout({
      agent: "seed-steps",
      rollout_id: uniqueId("seed-final"),
      task: { problem: "three questions" },
    });
    expect(envUpdates.get(view.rollout_id)).toEqual([
      [false, 0],
      [false, 1],
      [false, 2],
      [true, 3],
    ]);
  });

  it("never runs calls of an env class that is not multithread-safe interleaved in one isolate; a safe one runs interleaved", async () => {
    const deps = driverDeps(env);
    for (const agent of ["seed-unsafe-env", "seed-safe-env"] as const) {
      const ids = Array.from({ length: 4 }, (_, i) => uniqueId(`${agent}-${i}`));
      await Promise.all(
        ids.map((id) => createByHand(id, { agent, task: { problem: "What is 1 + 1?" } })),
      );
      const outcomes = await Promise.all(ids.map((id) => driveRollout(deps, id)));
      expect(outcomes.every((outcome) => outcome.result === "finished")).toBe(true);
      for (const id of ids) expect((await getRollout(id)).status).toBe("succeeded");
    }
    expect(envOverlap.unsafe.peak).toBe(1);
    expect(envOverlap.safe.peak).toBeGreaterThan(1);
  });
});
