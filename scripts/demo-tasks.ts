/** @module Deterministic demo tasks for the `math`, `calculator`, `js-coder` and `dialogue` agents. */
import { evaluateArithmetic, formatNumber } from "../src/agents/arithmetic";
import { createRng } from "../tools/simulator";
import { CODING_TASKS, codingPrompt, codingTests } from "../tools/simulator/coding-tasks";

/** One task to submit: which agent, and the task body. */
export interface DemoTask {
  agent: "math" | "calculator" | "js-coder" | "dialogue";
  task: {
    problem: string;
    ground_truth: string;
    task_id: string;
    extra_args?: Record<string, unknown>;
  };
}

function expression(random: () => number): string {
  const n = () => 2 + Math.floor(random() * 48);
  const shapes = [
    () => `${n()} * ${n()} + ${n()}`,
    () => `(${n()} + ${n()}) * ${n()}`,
    () => `${n()} * ${n()} - ${n()}`,
    () => `(${n()} - ${n()}) * (${n()} + ${n()})`,
  ];
  return shapes[Math.floor(random() * shapes.length)]!();
}

/** Turns of a demo dialogue: each reply after the first is a call whose prompt lost the previous reply's `<think>`. */
export const DEMO_DIALOGUE_TURNS = 3;

/**
 * Demo dialogues per `perAgent` tasks of each other agent: a few are enough to show the drift
 * split of a multi-turn reasoning rollout (`/think` makes Qwen3 reason in every turn; its chat
 * template drops each earlier turn's `<think>` from the next prompt).
 */
export function demoDialogues(perAgent: number): number {
  return Math.max(1, Math.floor(perAgent / 4));
}

/**
 * `perAgent` math, calculator and js-coder tasks with exact ground truths (js-coder's: unit
 * tests), plus `demoDialogues(perAgent)` multi-turn reasoning dialogues.
 */
export function demoTasks(perAgent: number, seed = 1): DemoTask[] {
  const random = createRng(seed).next;
  const tasks: DemoTask[] = [];
  for (let i = 0; i < perAgent; i++) {
    const math = expression(random);
    tasks.push({
      agent: "math",
      task: {
        task_id: `math-${i}`,
        problem: `What is ${math}?`,
        ground_truth: formatNumber(evaluateArithmetic(math)),
      },
    });
    const calc = expression(random);
    tasks.push({
      agent: "calculator",
      task: {
        task_id: `calculator-${i}`,
        problem: `Use the calculator to compute ${calc}.`,
        ground_truth: formatNumber(evaluateArithmetic(calc)),
      },
    });
    const coding = CODING_TASKS[i % CODING_TASKS.length]!;
    tasks.push({
      agent: "js-coder",
      task: {
        task_id: `js-coder-${i}`,
        problem: codingPrompt(coding),
        ground_truth: codingTests(coding),
      },
    });
  }
  for (let i = 0; i < demoDialogues(perAgent); i++) {
    tasks.push({
      agent: "dialogue",
      task: {
        task_id: `dialogue-${i}`,
        problem: `Tell me about the number ${7 + i}. /think`,
        ground_truth: "",
        extra_args: { turns: DEMO_DIALOGUE_TURNS },
      },
    });
  }
  return tasks;
}
