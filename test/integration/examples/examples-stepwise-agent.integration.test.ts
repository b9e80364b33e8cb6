/** Integration: examples/stepwise-agent, a BaseAgent/BaseEnv guessing game resumed from env snapshots between driver invocations. */
import { describe, expect, it } from "vitest";
import {
  GuessAgent,
  GUESS_SYSTEM_PROMPT,
  parseGuess,
} from "../../../examples/stepwise-agent/guess-agent";
import { GuessEnv, type GuessObservation } from "../../../examples/stepwise-agent/guess-env";
import "../../../examples/stepwise-agent/guess-number.agent";
import { runRollout, uniqueId } from "../../fixtures/rollouts";
import { expectOneSample, expectTokenLevelCalls } from "../fixtures/examples-fixtures";

const SECRET = 37;
const task = {
  problem: "Guess my number.",
  ground_truth: String(SECRET),
  extra_args: { low: 1, high: 100, max_guesses: 10 },
};

describe("examples/stepwise-agent (integration)", () => {
  it("narrows the range on each guess, restores from a snapshot, and rejects a missing guess", () => {
    const env = GuessEnv.fromDict({ task: { ...task, task_id: "t" } as never });
    expect(env.reset()[0]).toEqual({
      feedback: "I picked a whole number.",
      low: 1,
      high: 100,
      guesses_left: 10,
    });
    expect(env.step(50)).toEqual([
      { feedback: "Lower.", low: 1, high: 49, guesses_left: 9 },
      0,
      false,
      { guess: 50, guesses: 1, rebuilt_by: "reset" },
    ]);
    const resumed = GuessEnv.fromDict({ task: { ...task, task_id: "t" } as never });
    resumed.reset();
    resumed.restore(env.snapshot());
    expect(resumed.step(null)).toEqual([
      { feedback: "That is not a whole number from 1 to 49.", low: 1, high: 49, guesses_left: 8 },
      0,
      false,
      { guess: null, guesses: 2, rebuilt_by: "restore" },
    ]);
    expect(resumed.step(SECRET)[1]).toBe(1);
    expect([parseGuess("so \\boxed{25.5}"), parseGuess("no idea")]).toEqual([25, null]);
  });

  it("plays through POST /v1/rollouts, one committed step per guess, each later step run by a new invocation from the snapshot", async () => {
    const view = await runRollout(
      {
        agent: "guess-number",
        rollout_id: uniqueId("guess"),
        task,
        config: { max_steps: 12, slice_ms: 1 },
      },
      30_000,
    );
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "ENV_DONE" });
    const steps = view.trajectory.steps;
    expect(steps.length).toBeGreaterThanOrEqual(1);
    expect(steps.length).toBeLessThanOrEqual(10);
    expect(steps.map((step) => step.info.rebuilt_by)).toEqual(
      steps.map((_, index) => (index === 0 ? "reset" : "restore")),
    );
    expect(view.llm_calls.map((call) => call.step_id)).toEqual(steps.map((step) => step.step_id));
    expect(steps[0]!.chat_completions[0]).toEqual({ role: "system", content: GUESS_SYSTEM_PROMPT });
    for (const step of steps) {
      const before = step.observation as unknown as GuessObservation;
      const after = step.next_observation as unknown as GuessObservation;
      expect(step.action).toBe(parseGuess(step.model_response));
      const guess = step.action as number | null;
      if (guess !== null && guess >= before.low && guess < SECRET)
        expect(after.low).toBe(guess + 1);
      if (guess !== null && guess <= before.high && guess > SECRET)
        expect(after.high).toBe(guess - 1);
    }
    expect(view.reward).toBe(steps.at(-1)!.action === SECRET ? 1 : 0);
    expectTokenLevelCalls(view);
    await expectOneSample(view);
  });

  it("rebuilds the agent by replaying the recorded turns: the same inputs give the same chat", () => {
    const play = () => {
      const agent = new GuessAgent();
      agent.reset();
      agent.updateFromEnv({ feedback: "Higher.", low: 51, high: 100, guesses_left: 9 });
      const action = agent.updateFromModel({
        message: { role: "assistant", content: "\\boxed{75.5}" },
        text: "\\boxed{75.5}",
        toolCalls: [],
        finishReason: "stop",
        thought: "",
        action: null,
      });
      return { action, chat: agent.chatCompletions };
    };
    expect(play()).toEqual(play());
    expect(play().action).toEqual({ action: 75 });
    expect(play().chat[1]!.content).toContain("(51 + 100) / 2");
  });
});
