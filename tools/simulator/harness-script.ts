/**
 * @module The scripted model inside an agent harness (Claude Code, Codex, opencode): a request whose
 * user turns carry a known task's instruction and that offers a shell tool is answered first with
 * one call of that tool running the task's solution (or, when the rollout's draw fails, its wrong
 * attempt), then, once the tool's result is back, with a short final answer. The draw is seeded by
 * the rollout's sample key and the task, so every call of a rollout agrees and a re-run repeats.
 */
import type { ParsedToolCall } from "./hermes";
import { type HarnessTask, findHarnessTask, harnessTasksIn } from "./harness-tasks";
import type { SimulatorConfig } from "./options";
import { createRng, hashParts } from "./rng";
import type { ScriptAnswer, ScriptTurn, ToolMode } from "./scripted-answers";
import { type OfferedTool, findShellTool } from "./shell-tool";

/** What a harness answer is decided from, beyond the conversation the script always gets. */
export interface HarnessFields {
  /** The request's tools with their schemas (chat `tools`, or a ChatML prompt's `<tools>` lines). */
  tools?: readonly OfferedTool[];
  /** The request's `x-sample-key`, or null. */
  sampleKey?: string | null;
  /**
   * Text the open assistant turn of a completions prompt already holds (Qwen3's template writes
   * `<think>\n\n</think>\n\n` there under `enable_thinking: false`); the answer starts with it.
   */
  openTurn?: string;
}

/** A request as the harness script reads it. */
export interface HarnessRequest extends HarnessFields {
  turns: readonly ScriptTurn[];
  toolMode: ToolMode;
  thinking: boolean;
}

/** The config the harness script reads. */
export type HarnessConfig = Pick<SimulatorConfig, "seed" | "harnessTasks" | "harnessSuccessRate">;

/** What a failed rollout runs when its task has no `solution/wrong.sh`: a look around, no fix. */
export const IDLE_COMMAND = "ls";

/** The final answer after the tool's result came back. */
export const FINAL_ANSWER = "Done. I ran the commands for the task in the workspace.";

/**
 * Whether the rollout keyed `sampleKey` solves `taskId` (probability `harnessSuccessRate`): a pure
 * function of (server seed, task, sample key), or of (server seed, task) for an unkeyed request.
 */
export function harnessSucceeds(
  config: Pick<SimulatorConfig, "seed" | "harnessSuccessRate">,
  taskId: string,
  sampleKey: string | null,
): boolean {
  const seed =
    sampleKey === null
      ? hashParts(config.seed, "harness", taskId)
      : hashParts(config.seed, "harness", taskId, "key", sampleKey);
  return createRng(seed).next() < config.harnessSuccessRate;
}

function mayCall(mode: ToolMode, name: string): boolean {
  if (mode === "none") return false;
  return typeof mode === "string" || mode.name === name;
}

/** An empty think block the prompt already opened the turn with, or "". */
function openedThink(openTurn: string | undefined): string {
  return /^<think>\s*<\/think>\s*/.exec(openTurn ?? "")?.[0] ?? "";
}

function scriptOf(task: HarnessTask, succeeds: boolean): string {
  if (succeeds) return task.solution;
  return task.wrong ?? IDLE_COMMAND;
}

/**
 * The answer to a harness request, or undefined when `request` is not one (no `harnessTasks`, no
 * known instruction in a user turn, no callable shell tool): the caller's usual script answers then.
 */
export function harnessAnswer(
  request: HarnessRequest,
  config: HarnessConfig,
): ScriptAnswer | undefined {
  if (config.harnessTasks === null) return undefined;
  const shell = findShellTool(request.tools ?? []);
  if (!shell || !mayCall(request.toolMode, shell.name)) return undefined;
  const found = findHarnessTask(harnessTasksIn(config.harnessTasks), request.turns);
  if (!found) return undefined;
  const opened = openedThink(request.openTurn);
  const think = (reasoning: string): string =>
    opened !== "" ? opened : request.thinking ? `<think>${reasoning}</think>\n` : "";
  const results = request.turns.slice(found.turnIndex + 1).filter((turn) => turn.role === "tool");
  if (results.length > 0)
    return { content: think("The command has run.") + FINAL_ANSWER, toolCalls: [] };
  const succeeds = harnessSucceeds(config, found.task.id, request.sampleKey ?? null);
  const call: ParsedToolCall = {
    name: shell.name,
    arguments: shell.argumentsFor(scriptOf(found.task, succeeds)),
  };
  return {
    content: think(`I will run the commands that complete the task with ${shell.name}.`),
    toolCalls: [call],
  };
}
