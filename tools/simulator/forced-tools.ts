/**
 * @module Forced tool choice as vLLM serves it (vllm/entrypoints/openai/chat_completion/serving.py
 * and engine/serving.py `_parse_tool_calls_from_content`): the output is constrained to JSON
 * instead of hermes tags, so its token ids differ. A named choice yields the arguments object
 * alone; `"required"` yields `[{"name": …, "parameters": {…}}, …]`. The answer has `content: ""`.
 */
import type { ParsedToolCall } from "./hermes";
import { pythonJsonDumps } from "./hermes";
import { type DeltaToolCall, jsonValueText, makeToolCallId } from "./hermes-stream";

/** A forced tool choice: one named function, or any of them. */
export type ForcedChoice = { name: string } | "required";

/** The calls a forced choice makes: the script's own, or (when it wanted none) the forced tool with `{}`. */
function forcedCalls(
  choice: ForcedChoice,
  calls: readonly ParsedToolCall[],
  firstTool: string,
): ParsedToolCall[] {
  if (choice === "required")
    return calls.length > 0 ? [...calls] : [{ name: firstTool, arguments: {} }];
  return [calls.find((call) => call.name === choice.name) ?? { name: choice.name, arguments: {} }];
}

/** The JSON text the constrained model writes. */
export function forcedOutputText(
  choice: ForcedChoice,
  calls: readonly ParsedToolCall[],
  firstTool: string,
): string {
  const made = forcedCalls(choice, calls, firstTool);
  if (choice !== "required") return JSON.stringify(made[0]!.arguments);
  return JSON.stringify(made.map((call) => ({ name: call.name, parameters: call.arguments })));
}

/** A tool call in the answer's `tool_calls`. */
export interface AnswerToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * The answer's tool calls. Named: the generated text is the arguments, as written. Required: the
 * array is parsed and each `parameters` re-serialised with Python's json.dumps; output that is
 * not a complete array (cut off by max_tokens) yields no calls.
 */
export function parseForcedOutput(choice: ForcedChoice, text: string): AnswerToolCall[] {
  if (choice !== "required")
    return [
      { id: makeToolCallId(), type: "function", function: { name: choice.name, arguments: text } },
    ];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed
    .filter(
      (item): item is { name: string; parameters?: unknown } =>
        typeof item === "object" &&
        item !== null &&
        typeof (item as { name?: unknown }).name === "string",
    )
    .map((item) => ({
      id: makeToolCallId(),
      type: "function",
      function: { name: item.name, arguments: pythonJsonDumps(item.parameters ?? {}) },
    }));
}

/**
 * Streams forced tool calls. Named: the first delta carries id, type, name and the text so far,
 * later ones the new text; its `index` is the choice's index, as vLLM sends it. Required: one
 * call per array element once its name and the start of its parameters are known.
 */
export class ForcedToolStreamParser {
  readonly #choice: ForcedChoice;
  readonly #choiceIndex: number;
  #sent: string[] = [];
  #named = false;

  constructor(choice: ForcedChoice, choiceIndex: number) {
    this.#choice = choice;
    this.#choiceIndex = choiceIndex;
  }

  /** The tool-call deltas that `text` (all content generated so far) adds. */
  update(text: string): DeltaToolCall[] {
    if (this.#choice !== "required") return this.#updateNamed(this.#choice.name, text);
    const deltas: DeltaToolCall[] = [];
    const objects = /"name"\s*:\s*"([^"]+)"\s*,\s*"parameters"\s*:\s*/g;
    let index = 0;
    for (let match = objects.exec(text); match; match = objects.exec(text), index++) {
      const args = jsonValueText(text.slice(match.index + match[0].length));
      if (args === undefined) break;
      const sent = this.#sent[index];
      if (sent === undefined) {
        deltas.push({
          index,
          id: makeToolCallId(),
          type: "function",
          function: { name: match[1]!, arguments: args },
        });
      } else if (args.length > sent.length) {
        deltas.push({ index, function: { arguments: args.slice(sent.length) } });
      }
      this.#sent[index] = args;
    }
    return deltas;
  }

  #updateNamed(name: string, text: string): DeltaToolCall[] {
    const sent = this.#sent[0] ?? "";
    if (text.length <= sent.length && this.#named) return [];
    this.#sent[0] = text;
    if (!this.#named) {
      if (text === "") return [];
      this.#named = true;
      return [
        {
          index: this.#choiceIndex,
          id: makeToolCallId(),
          type: "function",
          function: { name, arguments: text },
        },
      ];
    }
    return [{ index: this.#choiceIndex, function: { arguments: text.slice(sent.length) } }];
  }
}
