/** @module Deterministic demo tasks for the `math`, `calculator` and `js-coder` agents. */
import { evaluateArithmetic, formatNumber } from "../src/agents/arithmetic";
import { createRng } from "../src/testing";
import { CODING_TASKS, codingPrompt, codingTests } from "../src/testing/vllm-simulator/coding-tasks";

/** One task to submit: which agent, and the task body. */
export interface DemoTask {
  agent: "math" | "calculator" | "js-coder";
  task: { problem: string; ground_truth: string; task_id: string };
}


function expression(random: () => number): string {
  const n = () => 2 + Math.floor(random() * 48);
  const shapes = [() => `${n()} * ${n()} + ${n()}`, () => `(${n()} + ${n()}) * ${n()}`, () => `${n()} * ${n()} - ${n()}`, () => `(${n()} - ${n()}) * (${n()} + ${n()})`];
  return shapes[Math.floor(random() * shapes.length)]!();
}

/** `perAgent` math, calculator and js-coder tasks with exact ground truths (js-coder's: unit tests). */
export function demoTasks(perAgent: number, seed = 1): DemoTask[] {
  const random = createRng(seed).next;
  const tasks: DemoTask[] = [];
  for (let i = 0; i < perAgent; i++) {
    const math = expression(random);
    tasks.push({ agent: "math", task: { task_id: `math-${i}`, problem: `What is ${math}?`, ground_truth: formatNumber(evaluateArithmetic(math)) } });
    const calc = expression(random);
    tasks.push({ agent: "calculator", task: { task_id: `calculator-${i}`, problem: `Use the calculator to compute ${calc}.`, ground_truth: formatNumber(evaluateArithmetic(calc)) } });
    const coding = CODING_TASKS[i % CODING_TASKS.length]!;
    tasks.push({ agent: "js-coder", task: { task_id: `js-coder-${i}`, problem: codingPrompt(coding), ground_truth: codingTests(coding) } });
  }
  return tasks;
}
