/**
 * @module Example `search-workflow`: Osmosis style, an `AgentWorkflow` that searches a tiny corpus
 * with tools, and a separate `Grader` that sees the label and sets the reward.
 */
import { defineWorkflow } from "../../src/sdk";
import { AnswerGrader } from "./answer-grader";
import { SearchWorkflow } from "./search-workflow";

/** Registered as `search-workflow`. */
export const searchWorkflow = defineWorkflow({
  name: "search-workflow",
  workflow: SearchWorkflow,
  grader: AnswerGrader,
  config: { max_turns: 4, top_k: 3, ungrounded_reward: 0.5 },
});
