/**
 * @module One chat request's choices (`n` of them): what the scripted model writes for each
 * (hermes tags, or constrained JSON under a forced tool choice), and how vLLM's reasoning and tool
 * parsers split each generation into the answer's content, reasoning and tool calls.
 */
import type { SimulatorConfig } from "./options";
import {
  type ForcedChoice,
  type AnswerToolCall,
  forcedOutputText,
  parseForcedOutput,
} from "./forced-tools";
import type { Generation } from "./engine/sequence";
import { parseHermesOutput, pythonJsonDumps } from "./hermes";
import { makeToolCallId } from "./hermes-stream";
import type { ScriptAnswer, ToolMode } from "./scripted-answers";
import { type ScriptConfig, type ScriptRequest, scriptedOutput } from "./script";
import { type ReasoningMode, splitReasoning } from "./reasoning-split";
import { createRng, hashParts } from "./rng";
import type { SimTokenizer } from "./sim-tokenizer";
import { tokenizerFor } from "./tokenizer-registry";

/** How the answer's tool calls come about. */
export type ToolParsing = "none" | "hermes" | ForcedChoice;

/** One choice of a chat request: its seeds and what the script writes; `generation` once served. */
export interface ChatChoice {
  index: number;
  /** Seed of this choice's logprobs (the script's seed mixed with the weights version). */
  seed: number;
  /** Seed of this choice's script (what a resumed call continues). */
  scriptSeed: number;
  /** The tokens the scripted source writes for it (before EOS). */
  bodyIds: number[];
  /** What the engine generated (set when the request ends). */
  generation: Generation;
}

/** A choice as the parsers present it. */
export interface ParsedChoice {
  content: string | null;
  reasoning: string | null;
  toolCalls: AnswerToolCall[];
  finishReason: string;
  /** Tokens inside the think block (for usage.completion_tokens_details). */
  reasoningTokens: number;
}

/** The parsing a request's tools and tool_choice select (the server runs the hermes tool parser). */
export function toolParsingOf(mode: ToolMode, toolCount: number): ToolParsing {
  if (toolCount === 0 || mode === "none") return "none";
  if (mode === "auto") return "hermes";
  return mode;
}

/**
 * Seed of choice `index`: choice 0 keeps the request's seed (so `n: 1` answers are what they
 * always were); greedy sampling (temperature 0) gives every choice the same tokens.
 */
export function choiceSeed(
  seed: number,
  index: number,
  temperature: number | null | undefined,
): number {
  return index === 0 || temperature === 0 ? seed : hashParts(seed, "choice", index);
}

/** The body ids the model writes for `output` under `parsing`, a think block kept before forced JSON. */
function bodyIds(
  tokenizer: SimTokenizer,
  output: ScriptAnswer,
  parsing: ToolParsing,
  firstTool: string,
  reasoningParser: boolean,
): number[] {
  if (parsing === "none" || parsing === "hermes")
    return tokenizer.renderAssistantBody(output.content, output.toolCalls);
  // Constrained decoding starts after the reasoning a reasoning parser sets aside; without one,
  // the whole output is the JSON.
  const think = reasoningParser
    ? (/^<think>[\s\S]*?<\/think>\n?/.exec(output.content)?.[0] ?? "")
    : "";
  // As an answer with no tool calls, so the think block takes the model's own form (Qwen3's).
  return tokenizer.renderAssistantBody(
    think + forcedOutputText(parsing, output.toolCalls, firstTool),
    [],
  );
}

/**
 * Whether the choice seeded `seed` is an empty reply (EOS first) under `emptyReplyRate`. A separate
 * draw, so the script's own random sequence (and every existing seed's answer) is unchanged.
 */
export function isEmptyReply(emptyReplyRate: number, seed: number): boolean {
  return emptyReplyRate > 0 && createRng(hashParts(seed, "empty-reply")).next() < emptyReplyRate;
}

/** The tokens the script writes for one choice: none for an empty reply (EOS at once, with `emptyReplyRate`), else its answer. */
export function planChoice(
  asked: ScriptRequest,
  config: ScriptConfig & Pick<SimulatorConfig, "emptyReplyRate" | "reasoningParser">,
  parsing: ToolParsing,
  seed: number,
): number[] {
  const tokenizer = tokenizerFor(config.tokenizer);
  if (isEmptyReply(config.emptyReplyRate, seed)) return [];
  const output = scriptedOutput(asked, config, seed);
  return bodyIds(tokenizer, output, parsing, asked.toolNames[0] ?? "", config.reasoningParser);
}

function hermesCalls(text: string | null): { content: string | null; toolCalls: AnswerToolCall[] } {
  const parsed = parseHermesOutput(text ?? "");
  if (parsed.toolCalls.length === 0) return { content: text, toolCalls: [] };
  const toolCalls = parsed.toolCalls.map((call): AnswerToolCall => ({
    id: makeToolCallId(),
    type: "function",
    function: { name: call.name, arguments: pythonJsonDumps(call.arguments) },
  }));
  return { content: parsed.content, toolCalls };
}

/** Splits one generation like vLLM's chat_completion_full_generator does. */
export function parseChoice(
  tokenizer: SimTokenizer,
  generation: Generation,
  parsing: ToolParsing,
  reasoning: ReasoningMode,
  includeReasoning: boolean,
): ParsedChoice {
  const reasoningParser = reasoning !== null;
  const split =
    reasoning !== null
      ? splitReasoning(generation.text, reasoning)
      : { reasoning: null, content: generation.text };
  const reasoningTokens =
    split.reasoning === null ? 0 : tokenizer.encode(`<think>${split.reasoning}</think>`).length;
  const shownReasoning = includeReasoning ? split.reasoning : null;
  const stopped = generation.finishReason === "stop";
  if (parsing === "none")
    return {
      content: split.content ?? (reasoningParser ? null : ""),
      reasoning: shownReasoning,
      toolCalls: [],
      finishReason: generation.finishReason,
      reasoningTokens,
    };
  if (parsing === "hermes") {
    const { content, toolCalls } = hermesCalls(split.content);
    return {
      content,
      reasoning: shownReasoning,
      toolCalls,
      finishReason: toolCalls.length > 0 && stopped ? "tool_calls" : generation.finishReason,
      reasoningTokens,
    };
  }
  const toolCalls = parseForcedOutput(parsing, split.content ?? "");
  // OpenAI's rule, which vLLM follows: "required" finishes with tool_calls, a named function with stop.
  const finishReason = parsing === "required" && stopped ? "tool_calls" : generation.finishReason;
  return { content: "", reasoning: shownReasoning, toolCalls, finishReason, reasoningTokens };
}
