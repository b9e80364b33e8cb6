/**
 * @module Qwen3's own chat template (its tokenizer_config.json `chat_template`) rendered with
 * `@huggingface/jinja`, fed the conversation the way vLLM feeds it (vllm/entrypoints/chat_utils.py):
 * text content joined into strings, history tool-call arguments parsed from JSON into objects,
 * tools as their pydantic `model_dump()`. Also what a Qwen3 model writes for a turn, in the exact
 * form the template renders it back (so the template stays append-only where Qwen3's does).
 */
import { Template } from "@huggingface/jinja";
import { SimulatorHttpError } from "./errors";
import type { ParsedToolCall } from "./hermes";
import { pythonJsonDumps } from "./hermes";
import { type ChatMessageParam, contentText } from "./request-schemas";
import type { ChatRenderOptions } from "./sim-tokenizer";

const compiled = new Map<string, Template>();

/**
 * vLLM's 400 for a conversation its preprocessing cannot turn into a prompt: the serving layer
 * answers `f"{e} {e.__cause__}"` (vllm/entrypoints/openai/chat_completion/serving.py), and a
 * template error reaches it re-raised as `ValueError(str(e)) from e`, so its text appears twice.
 */
function preprocessError(message: string, cause: string): SimulatorHttpError {
  return new SimulatorHttpError(400, "BadRequestError", `${message} ${cause}`);
}

/**
 * Python's `json.loads` error for `text` (a JSONDecodeError, which vLLM's `_postprocess_messages`
 * raises for tool-call arguments that are not JSON): "Extra data" after a complete value, else
 * "Expecting value", at the position JavaScript's parser reports.
 */
function pythonJsonError(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  const reported = /position (\d+)/.exec(message)?.[1];
  const at = reported !== undefined ? Number(reported) : text.length - text.trimStart().length;
  const before = text.slice(0, at);
  const line = before.split("\n").length;
  const column = at - (before.lastIndexOf("\n") + 1) + 1;
  const kind = /after JSON/.test(message) ? "Extra data" : "Expecting value";
  return `${kind}: line ${line} column ${column} (char ${at})`;
}

function toolArguments(raw: string): unknown {
  // vLLM turns empty arguments into {} and parses the rest: chat templates expect objects.
  if (raw === "") return {};
  try {
    return JSON.parse(raw);
  } catch (error) {
    // A JSONDecodeError has no __cause__, so vLLM's message ends in "None".
    throw preprocessError(pythonJsonError(raw, error), "None");
  }
}

/** The conversation as vLLM hands it to the template. */
function templateMessages(messages: readonly ChatMessageParam[]): Array<Record<string, unknown>> {
  return messages.map((message) => {
    const out: Record<string, unknown> = {
      role: message.role,
      content: contentText(message.content),
    };
    if (message.role === "assistant" && message.tool_calls) {
      out.tool_calls = message.tool_calls.map((call) => ({
        id: call.id ?? null,
        type: call.type ?? "function",
        function: { name: call.function.name, arguments: toolArguments(call.function.arguments) },
      }));
    }
    if (message.role === "assistant" && typeof message.reasoning_content === "string")
      out.reasoning_content = message.reasoning_content;
    if (message.role === "tool") out.tool_call_id = message.tool_call_id;
    return out;
  });
}

/** Prompt text of a chat under Qwen3's template. */
export function renderQwen3Chat(
  source: string,
  messages: readonly ChatMessageParam[],
  options: ChatRenderOptions,
): string {
  let template = compiled.get(source);
  if (!template) {
    template = new Template(source);
    compiled.set(source, template);
  }
  const tools = options.tools?.length
    ? options.tools.map((tool) => ({
        type: tool.type,
        function: {
          name: tool.function.name,
          description: tool.function.description ?? null,
          parameters: tool.function.parameters ?? null,
        },
      }))
    : undefined;
  const context = {
    ...(options.chatTemplateKwargs ?? {}),
    messages: templateMessages(messages),
    tools,
    add_generation_prompt: options.addGenerationPrompt ?? true,
    eos_token: "<|im_end|>",
    pad_token: "<|endoftext|>",
  };
  try {
    return template.render(context);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw preprocessError(message, message);
  }
}

/**
 * What a Qwen3 model writes for a turn of `content` (optionally opening with `<think>…</think>`)
 * and tool calls: the think block as `<think>\n…\n</think>\n\n`, each call as
 * `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>` with Python's JSON separators, a newline
 * between the answer and the calls. Exactly what the template renders for the message vLLM's
 * parsers make of it, so replaying the turn reproduces its ids.
 */
export function qwen3AssistantText(content: string, toolCalls: readonly ParsedToolCall[]): string {
  let think = "";
  let answer = content;
  const end = content.indexOf("</think>");
  if (content.startsWith("<think>") && end >= 0) {
    const reasoning = content.slice("<think>".length, end).replace(/^\n+|\n+$/g, "");
    think = `<think>\n${reasoning}\n</think>\n\n`;
    answer = content.slice(end + "</think>".length).replace(/^\n+/, "");
  }
  const calls = toolCalls.map(
    (call) =>
      `<tool_call>\n{"name": ${JSON.stringify(call.name)}, "arguments": ${pythonJsonDumps(call.arguments)}}\n</tool_call>`,
  );
  return think + answer + (answer !== "" && calls.length > 0 ? "\n" : "") + calls.join("\n");
}
