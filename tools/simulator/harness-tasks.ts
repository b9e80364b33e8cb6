/**
 * @module The agent-harness tasks the simulator knows, loaded from a directory in Harbor's task
 * layout (https://harborframework.com/docs/tasks: `<task>/instruction.md`, `<task>/solution/solve.sh`).
 * The simulator learns each task's solution here, out of band, never from the harness's workspace;
 * `solution/wrong.sh`, when present, is the plausible wrong attempt a failed rollout runs.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ScriptTurn } from "./scripted-answers";

/** One task as the simulator uses it. */
export interface HarnessTask {
  /** The task directory's name. */
  id: string;
  /** `instruction.md`, trimmed: what the harness is given. */
  instruction: string;
  /** `solution/solve.sh`: the oracle's script. */
  solution: string;
  /** `solution/wrong.sh`, or null when the task has none. */
  wrong: string | null;
}

/** A task whose instruction a conversation carries, and where. */
export interface FoundTask {
  task: HarnessTask;
  /** Index of the last user turn that contains the instruction. */
  turnIndex: number;
}

/** Whitespace runs as one space, so a harness that rewraps or re-indents the text still matches. */
function squash(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function readTask(dir: string, id: string): HarnessTask | undefined {
  const instructionPath = join(dir, id, "instruction.md");
  if (!existsSync(instructionPath)) return undefined;
  const solvePath = join(dir, id, "solution", "solve.sh");
  if (!existsSync(solvePath))
    throw new RangeError(`harness task ${id} has no solution: ${solvePath} is missing`);
  const instruction = readFileSync(instructionPath, "utf8").trim();
  if (instruction === "") throw new RangeError(`harness task ${id}: ${instructionPath} is empty`);
  const wrongPath = join(dir, id, "solution", "wrong.sh");
  return {
    id,
    instruction,
    solution: readFileSync(solvePath, "utf8"),
    wrong: existsSync(wrongPath) ? readFileSync(wrongPath, "utf8") : null,
  };
}

/**
 * Every task directory in `dir` (sorted by name); a subdirectory without `instruction.md` is not a
 * task and is skipped. Throws a RangeError when `dir` is not a directory, holds no task, or a task
 * has no `solution/solve.sh`.
 */
export function loadHarnessTasks(dir: string): HarnessTask[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new RangeError(`harnessTasks: ${dir} is not a directory`);
  const tasks: HarnessTask[] = [];
  for (const id of readdirSync(dir).sort()) {
    if (!statSync(join(dir, id)).isDirectory()) continue;
    const task = readTask(dir, id);
    if (task) tasks.push(task);
  }
  if (tasks.length === 0)
    throw new RangeError(`harnessTasks: ${dir} holds no task (no <task>/instruction.md)`);
  return tasks;
}

// Cached on globalThis, as the tokenizer is: loaded once per process and directory, at start.
const CACHE = Symbol.for("edge-rollout.vllm-simulator.harness-tasks");
type TaskCache = { [CACHE]?: Map<string, HarnessTask[]> };

/** The tasks in `dir`, loaded on first use (the simulator loads them at start, so errors show then). */
export function harnessTasksIn(dir: string): HarnessTask[] {
  const cache = ((globalThis as TaskCache)[CACHE] ??= new Map());
  let tasks = cache.get(dir);
  if (!tasks) {
    tasks = loadHarnessTasks(dir);
    cache.set(dir, tasks);
  }
  return tasks;
}

/**
 * The task whose instruction a user turn contains (harnesses wrap it: Claude Code adds reminder
 * blocks, Codex its environment context), the longest one when several match, so a task whose
 * instruction quotes another's is told apart. Undefined for a conversation about no known task.
 */
export function findHarnessTask(
  tasks: readonly HarnessTask[],
  turns: readonly ScriptTurn[],
): FoundTask | undefined {
  const wanted = tasks.map((task) => ({ task, text: squash(task.instruction) }));
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i]!;
    if (turn.role !== "user") continue;
    const text = squash(turn.content);
    let best: { task: HarnessTask; text: string } | undefined;
    for (const candidate of wanted)
      if (text.includes(candidate.text) && candidate.text.length > (best?.text.length ?? -1))
        best = candidate;
    if (best) return { task: best.task, turnIndex: i };
  }
  return undefined;
}
