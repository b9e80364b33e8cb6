/** @module Grading a room-selector answer against the task's expected room. */
import type { JsonValue } from "../../src/sdk";

/** The room named on the answer's last `Final answer: <room>` line, or null. */
export function finalChoice(text: string): string | null {
  const matches = [...text.matchAll(/final answer:\s*\**\s*([A-Za-z][\w-]*)/gi)];
  return matches.at(-1)?.[1] ?? null;
}

/**
 * 1 when the final answer names the expected room (case-insensitive), else 0. Agent-lightning's
 * tutorial asks an LLM judge; with a room id as the label an exact rule is enough and costs no call.
 */
export function gradeRoomChoice(text: string, expected: JsonValue): number {
  const choice = finalChoice(text);
  return choice !== null &&
    typeof expected === "string" &&
    choice.toLowerCase() === expected.toLowerCase()
    ? 1
    : 0;
}
