/**
 * @module Reads a ChatML prompt back into turns, so `/v1/completions` with a prompt a client
 * rendered itself (say from `/tokenize` ids) gets the same scripted behaviour as chat.
 */
import type { ScriptTurn } from "./scripted-answers";
import type { OfferedTool } from "./shell-tool";

/** A tool definition read back from a `<tools>` block (one JSON line each, as the template writes it). */
export interface ReadTool extends OfferedTool {
  type: string;
  function: {
    name: string;
    description?: string | null;
    parameters?: Record<string, unknown> | null;
  };
}

/** Turns, offered tool names and the tools' whole definitions recovered from a prompt. */
export interface ReadPrompt {
  turns: ScriptTurn[];
  toolNames: string[];
  tools: ReadTool[];
}

const TOOLS_OPEN = "<tools>\n";
const TOOLS_CLOSE = "\n</tools>";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The tool definitions of a system turn. The last `<tools>` block: the template appends it after
 * the caller's own system prompt, which may mention the tag itself.
 */
function toolsOf(system: string): ReadTool[] {
  const start = system.lastIndexOf(TOOLS_OPEN);
  if (start < 0) return [];
  const end = system.indexOf(TOOLS_CLOSE, start + TOOLS_OPEN.length);
  if (end < 0) return [];
  const tools: ReadTool[] = [];
  for (const line of system.slice(start + TOOLS_OPEN.length, end).split("\n")) {
    try {
      const tool = JSON.parse(line) as { type?: unknown; function?: unknown };
      if (!isRecord(tool.function) || typeof tool.function.name !== "string") continue;
      const { description, parameters } = tool.function;
      tools.push({
        type: typeof tool.type === "string" ? tool.type : "function",
        function: {
          ...tool.function,
          name: tool.function.name,
          description: typeof description === "string" ? description : null,
          parameters: isRecord(parameters) ? parameters : null,
        },
      });
    } catch {
      // A line that is not a tool definition is simply not a tool.
    }
  }
  return tools;
}

/** Splits `<|im_start|>role\n…<|im_end|>` turns; text without ChatML is one user turn. */
export function readChatMlPrompt(text: string): ReadPrompt {
  if (!text.includes("<|im_start|>"))
    return { turns: [{ role: "user", content: text }], toolNames: [], tools: [] };
  const turns: ScriptTurn[] = [];
  const tools: ReadTool[] = [];
  for (const chunk of text.split("<|im_start|>").slice(1)) {
    const newline = chunk.indexOf("\n");
    if (newline < 0) continue;
    const role = chunk.slice(0, newline);
    const end = chunk.indexOf("<|im_end|>");
    const body = chunk.slice(newline + 1, end < 0 ? undefined : end);
    // The open generation prompt at the end is not a turn.
    if (end < 0 && body === "") continue;
    if (role === "system") {
      tools.push(...toolsOf(body));
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
  return { turns, toolNames: tools.map((tool) => tool.function.name), tools };
}
