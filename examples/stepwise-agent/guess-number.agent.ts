/**
 * @module Example `guess-number`: a stepwise agent (AgentSDK style `BaseAgent` + `BaseEnv`). Each
 * step is one model call and one guess, committed on its own; the env is snapshot-able, so a
 * rollout handed to another driver invocation resumes from its last step without replaying it.
 */
import { defineAgent } from "../../src/sdk";
import { GuessAgent } from "./guess-agent";
import { GuessEnv } from "./guess-env";

/** Registered as `guess-number`: the reward is the sum of step rewards (1 when the number is found). */
export const guessNumber = defineAgent({
  name: "guess-number",
  envClass: GuessEnv,
  agentClass: GuessAgent,
});
