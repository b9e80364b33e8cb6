/**
 * @module Example `ai-sdk-calculator`: the calculator task written with the Vercel AI SDK
 * (`generateText` with a `calculate` tool and `stopWhen`), run as a function agent. The model
 * from `src/integrations/ai-sdk.ts` puts every step's call on the rollout's gateway, so each step
 * is recorded with token ids and logprobs and the calls form the training sample.
 */
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { createAiSdkModel } from "../../src/integrations/ai-sdk";
import { rollout } from "../../src/sdk";
import {
  CALCULATE_DESCRIPTION,
  CALCULATOR_SYSTEM_PROMPT,
  calculate,
  gradeBoxedAnswer,
} from "../shared/calculator";

/** The `calculate` tool, as the AI SDK declares tools (a zod input schema and an `execute`). */
export const calculateTool = tool({
  description: CALCULATE_DESCRIPTION,
  inputSchema: z.object({ expression: z.string().describe("e.g. (17 + 25) * 3") }),
  execute: async ({ expression }) => calculate(expression),
});

/** Registered as `ai-sdk-calculator`: up to 4 steps of generate → tool → generate, then the graded boxed answer. */
export const aiSdkCalculator = rollout(
  async ({ task, llm, signal }) => {
    const result = await generateText({
      model: createAiSdkModel(llm),
      system: CALCULATOR_SYSTEM_PROMPT,
      prompt: task.problem,
      tools: { calculate: calculateTool },
      stopWhen: stepCountIs(4),
      // The gateway already retries upstream faults; an SDK retry would be a second recorded call.
      maxRetries: 0,
      abortSignal: signal,
    });
    return gradeBoxedAnswer(result.text, task.ground_truth);
  },
  { name: "ai-sdk-calculator" },
);
