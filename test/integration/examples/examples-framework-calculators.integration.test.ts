/**
 * Integration: the calculator task written with two agent frameworks, each run as a function
 * agent inside workerd on the rollout's model: examples/openai-agents-calculator (`@openai/agents`)
 * and examples/ai-sdk-calculator (the Vercel AI SDK's `generateText` with a tool and `stopWhen`).
 * Both must behave the same from the rollout's point of view, so one suite runs against each.
 */
import { describe, expect, it } from "vitest";
import "../../../examples/ai-sdk-calculator/ai-sdk-calculator.agent";
import "../../../examples/openai-agents-calculator/openai-agents-calculator.agent";
import { CALCULATOR_SYSTEM_PROMPT, gradeBoxedAnswer } from "../../../examples/shared/calculator";
import { runRollout, uniqueId } from "../../fixtures/rollouts";
import { expectOneSample, expectTokenLevelCalls, lastAnswer } from "../fixtures/examples-fixtures";

const task = { problem: "Use the calculator to compute (3 + 4) * 5.", ground_truth: "35" };

describe.each(["openai-agents-calculator", "ai-sdk-calculator"])(
  "examples/%s (integration)",
  (agent) => {
    it("runs the framework's tool loop on the rollout's model: the tool call, its result, then the answer", async () => {
      const view = await runRollout({ agent, rollout_id: uniqueId(`${agent}-loop`), task });
      expect(view).toMatchObject({
        status: "succeeded",
        termination_reason: "ENV_DONE",
        attempts: 1,
        final_attempt: 1,
      });
      const [toolTurn, answerTurn] = view.llm_calls;
      expect(view.llm_calls).toHaveLength(2);
      expect(toolTurn!.request.messages).toEqual([
        { role: "system", content: CALCULATOR_SYSTEM_PROMPT },
        { role: "user", content: task.problem },
      ]);
      expect(toolTurn!.request.tools).toEqual([
        expect.objectContaining({
          type: "function",
          function: expect.objectContaining({ name: "calculate" }),
        }),
      ]);
      const toolCall = toolTurn!.response_message.tool_calls![0]!;
      expect([toolCall.function.name, JSON.parse(toolCall.function.arguments)]).toEqual([
        "calculate",
        { expression: "(3 + 4) * 5" },
      ]);
      expect(answerTurn!.request.messages).toContainEqual({
        role: "tool",
        tool_call_id: toolCall.id,
        content: "35",
      });
      expectTokenLevelCalls(view);
    });

    it("returns the grade of the final answer as the reward, and its calls become one training sample", async () => {
      const view = await runRollout({ agent, rollout_id: uniqueId(`${agent}-reward`), task });
      expect(view.reward).toBe(gradeBoxedAnswer(lastAnswer(view), "35"));
      expect(view.spans.find((span) => span.name === "final_reward")).toMatchObject({
        kind: "reward",
        value: view.reward,
      });
      expect(view.trajectory.steps.map((step) => step.llm_call_ids[0])).toEqual(
        view.llm_calls.map((call) => call.call_id),
      );
      await expectOneSample(view);
    });
  },
);
