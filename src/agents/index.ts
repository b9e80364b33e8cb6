/** @module The demo agents, registered by name when this module is imported. */
import { defineAgent } from "../sdk/agent-registry";
import { CalculatorAgent } from "./calculator/calculator-agent";
import { CalculatorEnv } from "./calculator/calculator-env";
import { DialogueAgent } from "./dialogue/dialogue-agent";
import { DialogueEnv } from "./dialogue/dialogue-env";
import { DigitsAgent } from "./digits/digits-agent";
import { DigitsEnv } from "./digits/digits-env";
import { JsCoderAgent } from "./js-coder/js-coder-agent";
import { JsCoderEnv } from "./js-coder/js-coder-env";
import { MathAgent } from "./math/math-agent";
import { MathEnv } from "./math/math-env";

/** `math`: single turn, the boxed answer graded against ground_truth. */
export const mathAgent = defineAgent({ name: "math", envClass: MathEnv, agentClass: MathAgent });

/** `calculator`: multi-turn, the model calls `calculate`, then answers. */
export const calculatorAgent = defineAgent({
  name: "calculator",
  envClass: CalculatorEnv,
  agentClass: CalculatorAgent,
});

/** `dialogue`: a fixed number of turns (task.extra_args.turns, default 5); used by the loop benchmark. */
export const dialogueAgent = defineAgent({
  name: "dialogue",
  envClass: DialogueEnv,
  agentClass: DialogueAgent,
});

/**
 * `js-coder`: multi-turn; the model writes a function, the env runs the task's unit tests on it in
 * a sandboxed isolate (runCode) and returns the failures; reward = the last attempt's passing share.
 */
export const jsCoderAgent = defineAgent({
  name: "js-coder",
  envClass: JsCoderEnv,
  agentClass: JsCoderAgent,
  computeTrajectoryReward: (trajectory) => trajectory.steps.at(-1)?.reward ?? 0,
});

/**
 * `digits`: copy one digit per turn (ground_truth "7", or "73" for two turns); the learning demo's
 * task (`npm run bench:learn`), small enough for a tiny real policy to learn in minutes.
 */
export const digitsAgent = defineAgent({
  name: "digits",
  envClass: DigitsEnv,
  agentClass: DigitsAgent,
});
