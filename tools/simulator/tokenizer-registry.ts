/** @module Which `SimTokenizer` a name stands for: the toy one at once, Qwen3's built once per process. */
import { renderAssistantBody, renderChatPrompt } from "./chat-template";
import { loadQwen3Tokenizer } from "./qwen3-tokenizer";
import type { SimTokenizer, TokenizerName } from "./sim-tokenizer";
import * as toy from "./tokenizer";

const toyTokenizer: SimTokenizer = {
  name: "toy",
  vocabSize: toy.VOCAB_SIZE,
  eosTokenId: toy.EOS_TOKEN_ID,
  controlTokenIds: toy.CONTROL_TOKEN_IDS,
  plainTokenRange: [toy.FIRST_PLAIN_TOKEN_ID, toy.VOCAB_SIZE - 1],
  assistantHeader: [toy.IM_START_TOKEN_ID, ...toy.encode("assistant\n")],
  encode: toy.encode,
  tokenBytes: toy.tokenBytes,
  vocabToken: toy.tokenToString,
  renderChat: (messages, options) =>
    renderChatPrompt(messages, {
      tools: options.tools,
      addGenerationPrompt: options.addGenerationPrompt,
      stripThinkInHistory: options.stripThinkInHistory,
    }),
  renderAssistantBody,
};

// Cached on globalThis, not in this module: test runners load a fresh module graph per test file,
// and Qwen3's tokenizer costs about a second to build, so it is built once per process.
const CACHE = Symbol.for("edge-rollout.vllm-simulator.qwen3-tokenizer");
type TokenizerCache = { [CACHE]?: SimTokenizer };

/** The tokenizer named `name`; Qwen3's is built on first use, once per process. */
export function tokenizerFor(name: TokenizerName): SimTokenizer {
  if (name === "toy") return toyTokenizer;
  const cache = globalThis as TokenizerCache;
  return (cache[CACHE] ??= loadQwen3Tokenizer());
}
