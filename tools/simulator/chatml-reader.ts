/**
 * @module Reads a ChatML prompt back into turns, so `/v1/completions` with a prompt a client
 * rendered itself (say from `/tokenize` ids) gets the same scripted behaviour as chat.
 */
import type { ScriptTurn } from "./scripted-answers";

/** Turns and offered tool names recovered from a prompt. */
export interface ReadPrompt {
  turns: ScriptTurn[];
  toolNames: string[];
}

function toolNamesOf(system: string): string[] {
  const match = /<tools>\n([\s\S]*?)\n<\/tools>/.exec(system);
  if (!match?.[1]) return [];
  const names: string[] = [];
  for (const line of match[1].split("\n")) {
    try {
      const tool = JSON.parse(line) as { function?: { name?: unknown } };
      if (typeof tool.function?.name === "string") names.push(tool.function.name);
    } catch {
      // A line that is not a tool definition is simply not a tool.
    }
  }
  return names;
}

/** Splits `<|im_start|>role\n…<|im_end|>` turns; text without ChatML is one user turn. */
export function readChatMlPrompt(text: string): ReadPrompt {
  if (!text.includes("<|im_start|>"))
    return { turns: [{ role: "user", content: text }], toolNames: [] };
  const turns: ScriptTurn[] = [];
  const toolNames: string[] = [];
  for (const chunk of text.split("<|im_start|>").slice(1)) {
    const newline = chunk.indexOf("\n");
    if (newline < 0) continue;
    const role = chunk.slice(0, newline);
    const end = chunk.indexOf("<|im_end|>");
    const body = chunk.slice(newline + 1, end < 0 ? undefined : end);
    // The open generation prompt at the end is not a turn.
    if (end < 0 && body === "") continue;
    if (role === "system") {
      toolNames.push(...toolNamesOf(body));
      turns.push({ role: "system", content: body });
    } else if (
      role === "user" &&
      body.startsWith("<tool_response>\n") &&
      body.endsWith("\n</tool_response>")
    ) {
      turns.push({
        role: "tool",
        content: body.slice("<tool_response>\n".length, -"\n</tool_response>".length),
      });
    } else if (role === "user" || role === "assistant") {
      turns.push({ role, content: body });
    }
  }
  return { turns, toolNames };
}
