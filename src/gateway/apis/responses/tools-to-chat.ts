/**
 * @module Responses tools as chat-completions function tools. Function tools map one to one.
 * A custom (freeform) tool, such as Codex's `apply_patch`, takes raw text rather than JSON; chat
 * models only call JSON functions, so it becomes a function with one required string parameter,
 * `input`, and the model's call of it goes back to the harness as a `custom_tool_call` with that
 * string. `local_shell` becomes a function of the same name taking the action's fields. Hosted
 * tools (web_search, file_search, mcp…) run on OpenAI's side; the gateway has none to run, so it
 * leaves them out rather than let the model call a tool nobody answers. `namespace` tools are left
 * out too: Codex 0.171 sends one, `multi_agent_v1` (spawn_agent, send_input…), whose sub-agents
 * would each hold a conversation of their own through the same rollout, so the rollout's calls
 * would no longer extend one another into one trained sample.
 */
import type { JsonObject, JsonValue } from "../../../schemas/json";
import type { CustomTool, FunctionTool, Tool, ToolChoice } from "./request-schema";

/** The chat function that stands for the `local_shell` tool. */
export const LOCAL_SHELL_FUNCTION = "local_shell";

/** Which chat function names stand for non-function tools, so a call of one maps back. */
export interface ToolKinds {
  /** Names of custom (freeform) tools: their calls return as `custom_tool_call` items. */
  custom: ReadonlySet<string>;
  /** Whether `local_shell` is offered: its calls return as `local_shell_call` items. */
  localShell: boolean;
}

/** The tool kinds a request offers. */
export function toolKinds(tools: readonly Tool[] | null | undefined): ToolKinds {
  const custom = new Set<string>();
  let localShell = false;
  for (const tool of tools ?? []) {
    if (tool.type === "custom") custom.add((tool as CustomTool).name);
    else if (tool.type === "local_shell") localShell = true;
  }
  return { custom, localShell };
}

function functionToChat(tool: FunctionTool): JsonObject {
  const fn: JsonObject = { name: tool.name };
  if (typeof tool.description === "string") fn.description = tool.description;
  if (tool.parameters) fn.parameters = tool.parameters as JsonObject;
  if (typeof tool.strict === "boolean") fn.strict = tool.strict;
  return { type: "function", function: fn };
}

/** What the model is told about `input`: the tool's grammar when it has one, so it can follow it. */
function inputDescription(tool: CustomTool): string {
  const format = tool.format;
  if (format?.type === "grammar" && format.definition)
    return `Raw text (not JSON) following this ${format.syntax ?? ""} grammar:\n${format.definition}`;
  return "Raw text input for the tool (not JSON).";
}

function customToChat(tool: CustomTool): JsonObject {
  const fn: JsonObject = { name: tool.name };
  if (typeof tool.description === "string") fn.description = tool.description;
  fn.parameters = {
    type: "object",
    properties: { input: { type: "string", description: inputDescription(tool) } },
    required: ["input"],
    additionalProperties: false,
  };
  return { type: "function", function: fn };
}

const LOCAL_SHELL_TOOL: JsonObject = {
  type: "function",
  function: {
    name: LOCAL_SHELL_FUNCTION,
    description: "Runs a command on the local machine and returns its output.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "array", items: { type: "string" }, description: "The argv to run." },
        workdir: { type: "string", description: "The working directory." },
        timeout_ms: { type: "integer", description: "Timeout in milliseconds." },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
};

/** The chat `tools` for a request's tools, in order; undefined when none translates. */
export function toolsToChat(tools: readonly Tool[] | null | undefined): JsonObject[] | undefined {
  const out: JsonObject[] = [];
  for (const tool of tools ?? []) {
    if (tool.type === "function") out.push(functionToChat(tool as FunctionTool));
    else if (tool.type === "custom") out.push(customToChat(tool as CustomTool));
    else if (tool.type === "local_shell") out.push(LOCAL_SHELL_TOOL);
  }
  return out.length > 0 ? out : undefined;
}

/**
 * The chat `tool_choice` for a Responses one: a mode as is, a named function or custom tool as
 * chat's `{type:"function",function:{name}}`, `{type:"local_shell"}` as that function. Others
 * (allowed_tools, hosted tools) have no chat form and are left out, which means "auto".
 */
export function toolChoiceToChat(
  choice: ToolChoice | null | undefined,
  kinds: ToolKinds,
): JsonValue | undefined {
  if (choice === null || choice === undefined) return undefined;
  if (typeof choice === "string") return choice;
  if ((choice.type === "function" || choice.type === "custom") && choice.name)
    return { type: "function", function: { name: choice.name } };
  if (choice.type === "local_shell" && kinds.localShell)
    return { type: "function", function: { name: LOCAL_SHELL_FUNCTION } };
  return undefined;
}
