/**
 * @module Example `openai-agents-calculator`: the calculator task written with `@openai/agents`
 * (an `Agent` with a `calculate` function tool), run as a function agent. The runner from
 * `src/integrations/openai-agents.ts` puts every model call on the rollout's gateway, so each turn
 * of the agent loop is recorded with token ids and logprobs and the calls form the training sample.
 */
import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import { createOpenAIAgentsRunner } from "../../src/integrations/openai-agents";
import { rollout } from "../../src/sdk";
import {
  CALCULATE_DESCRIPTION,
  CALCULATOR_SYSTEM_PROMPT,
  calculate,
  gradeBoxedAnswer,
} from "../shared/calculator";

/** The `calculate` tool, as `@openai/agents` declares function tools (a zod schema for the arguments). */
export const calculateTool = tool({
  name: "calculate",
  description: CALCULATE_DESCRIPTION,
  parameters: z.object({ expression: z.string().describe("e.g. (17 + 25) * 3") }),
  execute: ({ expression }) => calculate(expression),
});

/** Declared once, without a model: the runner supplies the rollout's model on every run. */
export const calculatorAgent = new Agent({
  name: "calculator",
  instructions: CALCULATOR_SYSTEM_PROMPT,
  tools: [calculateTool],
});

/** Registered as `openai-agents-calculator`: runs the agent on the task, returns the graded boxed answer. */
export const openaiAgentsCalculator = rollout(
  async ({ task, llm, signal }) => {
    // maxTurns bounds the tool loop; running out throws, which fails (and retries) the attempt.
    const result = await createOpenAIAgentsRunner(llm).run(calculatorAgent, task.problem, {
      maxTurns: 4,
      signal,
    });
    return gradeBoxedAnswer(result.finalOutput ?? "", task.ground_truth);
  },
  { name: "openai-agents-calculator" },
);
