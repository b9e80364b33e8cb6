/**
 * @module The simulator's model tokenizer, as one interface over two vocabularies: Qwen3's real
 * tokenizer and chat template (the default, `qwen3-tokenizer.ts`), or the small deterministic toy
 * vocabulary (`tokenizer.ts`, `chat-template.ts`) for tests that need its speed or its fixed ids;
 * and what every handler does with either (decode, one token's text). Handlers get one through
 * `tokenizerFor(config.tokenizer)` (tokenizer-registry.ts).
 */
import type { RenderChatOptions } from "./chat-template";
import { createUtf8Decoder, decodeTokenBytes } from "./token-bytes";
import type { ParsedToolCall } from "./hermes";
import type { ChatMessageParam } from "./request-schemas";

/** Which vocabulary and chat template the simulator serves. */
export type TokenizerName = "qwen3" | "toy";

/** Options of `SimTokenizer.renderChat`. */
export interface ChatRenderOptions {
  tools?: RenderChatOptions["tools"];
  /** End with the assistant header. Default true. */
  addGenerationPrompt?: boolean | null | undefined;
  /** `chat_template_kwargs` (Qwen3's template reads `enable_thinking`). */
  chatTemplateKwargs?: Record<string, unknown> | null | undefined;
  /** Toy template only: drop `<think>` from earlier turns (Qwen3's template decides this itself). */
  stripThinkInHistory?: boolean | undefined;
}

/** A model's tokenizer and chat format, as the simulator needs them. */
export interface SimTokenizer {
  readonly name: TokenizerName;
  /** Valid ids are 0 … vocabSize - 1. */
  readonly vocabSize: number;
  /** `<|im_end|>`: ends each turn and each completion that stops on EOS. */
  readonly eosTokenId: number;
  /** Ids vLLM drops from generated text (`skip_special_tokens`): the "special" added tokens. */
  readonly controlTokenIds: ReadonlySet<number>;
  /** Ids ordinary text uses, `[first, last]`: where plausible alternative tokens are drawn from. */
  readonly plainTokenRange: readonly [number, number];
  /** Ids of `<|im_start|>assistant\n`, the header a continued assistant turn follows. */
  readonly assistantHeader: readonly number[];
  /** Ids of `text`; special-token strings in it become their ids (vLLM's prompt tokenization). */
  encode(text: string): number[];
  /** Raw bytes of one id; throws a RangeError outside the vocabulary. */
  tokenBytes(id: number): Uint8Array;
  /** The vocabulary entry of one id (`convert_ids_to_tokens`, e.g. `Ġis`): `/tokenize`'s `token_strs`. */
  vocabToken(id: number): string;
  /** Prompt ids of a chat, rendered by the model's chat template. */
  renderChat(messages: readonly ChatMessageParam[], options: ChatRenderOptions): number[];
  /** Ids the model writes for an assistant turn: `content`, then hermes tool calls (EOS not included). */
  renderAssistantBody(content: string, toolCalls: readonly ParsedToolCall[]): number[];
}

const utf8 = new TextEncoder();

/** Re-exported for the simulator modules that decode with it (defined in token-bytes.ts). */
export { createUtf8Decoder };

/** Whether `id` is in the vocabulary. */
export function isTokenId(tokenizer: SimTokenizer, id: number): boolean {
  return Number.isInteger(id) && id >= 0 && id < tokenizer.vocabSize;
}

/** Text of `ids` (`tokenizer.decode`); `skipSpecialTokens` drops the control tokens, as vLLM does for generated text. */
export function decodeIds(
  tokenizer: SimTokenizer,
  ids: readonly number[],
  options: { skipSpecialTokens?: boolean } = {},
): string {
  return decodeTokenBytes(
    ids,
    (id) => tokenizer.tokenBytes(id),
    (id) => options.skipSpecialTokens === true && tokenizer.controlTokenIds.has(id),
  );
}

/**
 * One token's text as vLLM's logprobs show it (`tokenizer.decode([id])`, one id at a time): a
 * token holding part of a UTF-8 character shows U+FFFD.
 */
export function tokenText(tokenizer: SimTokenizer, id: number): string {
  return createUtf8Decoder().decode(tokenizer.tokenBytes(id));
}

/** UTF-8 bytes of a string (the `bytes` of a chat logprob entry). */
export function utf8Bytes(text: string): number[] {
  return Array.from(utf8.encode(text));
}
