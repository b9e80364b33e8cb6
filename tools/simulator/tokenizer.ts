/**
 * @module A deterministic, exactly invertible byte-level tokenizer shaped like Qwen's.
 *
 * Ids: the special tokens first (so they are small and fixed), then all 256 single bytes (so
 * any string can be encoded), then the multi-character pieces of `vocab-pieces.ts`.
 * Encoding splits on special-token strings and greedily takes the longest matching piece over
 * the UTF-8 bytes of each plain segment. Greedy matching is not stable under concatenation,
 * which is why the chat template tokenizes every piece separately.
 */
import { createUtf8Decoder, decodeTokenBytes } from "./token-bytes";
import { VOCAB_PIECES } from "./vocab-pieces";

/** The special tokens and their ids, as Qwen2.5/Qwen3 spell them. */
export const SPECIAL_TOKENS = {
  "<|endoftext|>": 0,
  "<|im_start|>": 1,
  "<|im_end|>": 2,
  "<tool_call>": 3,
  "</tool_call>": 4,
  "<tool_response>": 5,
  "</tool_response>": 6,
  "<think>": 7,
  "</think>": 8,
} as const;

/** `<|im_end|>`: ends every chat turn, and every completion that finishes with "stop". */
export const EOS_TOKEN_ID = SPECIAL_TOKENS["<|im_end|>"];
/** `<|im_start|>`. */
export const IM_START_TOKEN_ID = SPECIAL_TOKENS["<|im_start|>"];

/**
 * Tokens vLLM drops from generated text (skip_special_tokens). As in Qwen's tokenizer config,
 * `<think>` and `<tool_call>` are added tokens but not "special", so they stay in the text.
 */
export const CONTROL_TOKEN_IDS: ReadonlySet<number> = new Set([0, 1, 2]);

const SPECIAL_STRINGS = Object.keys(SPECIAL_TOKENS).sort((a, b) => b.length - a.length);
const FIRST_BYTE_ID = SPECIAL_STRINGS.length;
const utf8 = new TextEncoder();

/** Re-exported for the simulator modules that decode with it (defined in token-bytes.ts). */
export { createUtf8Decoder };

interface TrieNode {
  children: Map<number, TrieNode>;
  id: number | undefined;
}

/** Byte sequence of every id, indexed by id. */
const ID_BYTES: Uint8Array[] = [];
const ROOT: TrieNode = { children: new Map(), id: undefined };

function insert(bytes: Uint8Array, id: number): void {
  let node = ROOT;
  for (const byte of bytes) {
    let child = node.children.get(byte);
    if (!child) {
      child = { children: new Map(), id: undefined };
      node.children.set(byte, child);
    }
    node = child;
  }
  node.id ??= id;
}

for (const special of SPECIAL_STRINGS)
  ID_BYTES[SPECIAL_TOKENS[special as keyof typeof SPECIAL_TOKENS]] = utf8.encode(special);
for (let byte = 0; byte < 256; byte++) {
  ID_BYTES[FIRST_BYTE_ID + byte] = Uint8Array.of(byte);
  insert(Uint8Array.of(byte), FIRST_BYTE_ID + byte);
}
{
  const seen = new Set<string>();
  for (const piece of VOCAB_PIECES) {
    const bytes = utf8.encode(piece);
    if (bytes.length < 2 || seen.has(piece)) continue;
    seen.add(piece);
    const id = FIRST_BYTE_ID + 256 + seen.size - 1;
    ID_BYTES[id] = bytes;
    insert(bytes, id);
  }
}

/** Number of ids; valid ids are 0 … VOCAB_SIZE - 1. */
export const VOCAB_SIZE = ID_BYTES.length;
/** First id that is not a special token (useful for picking plausible alternative tokens). */
export const FIRST_PLAIN_TOKEN_ID = FIRST_BYTE_ID;

function encodePlain(text: string, out: number[]): void {
  const bytes = utf8.encode(text);
  let i = 0;
  while (i < bytes.length) {
    let node: TrieNode | undefined = ROOT;
    let bestId = -1;
    let bestLen = 0;
    for (let j = i; j < bytes.length; j++) {
      node = node.children.get(bytes[j] as number);
      if (!node) break;
      if (node.id !== undefined) {
        bestId = node.id;
        bestLen = j - i + 1;
      }
    }
    // Every single byte is in the trie, so bestLen is at least 1.
    out.push(bestId);
    i += bestLen;
  }
}

/** Ids of `text`; special-token strings anywhere in it become their special ids. */
export function encode(text: string): number[] {
  const out: number[] = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const special =
      text[i] === "<" ? SPECIAL_STRINGS.find((s) => text.startsWith(s, i)) : undefined;
    if (special === undefined) {
      i++;
      continue;
    }
    if (i > start) encodePlain(text.slice(start, i), out);
    out.push(SPECIAL_TOKENS[special as keyof typeof SPECIAL_TOKENS]);
    i += special.length;
    start = i;
  }
  if (start < text.length) encodePlain(text.slice(start), out);
  return out;
}

/** Raw bytes of one id; throws on an id outside the vocabulary. */
export function tokenBytes(id: number): Uint8Array {
  const bytes = ID_BYTES[id];
  if (bytes === undefined)
    throw new RangeError(`token id ${id} is outside the vocabulary (size ${VOCAB_SIZE})`);
  return bytes;
}

/** Whether `id` is a valid token id. */
export function isTokenId(id: number): boolean {
  return Number.isInteger(id) && id >= 0 && id < VOCAB_SIZE;
}

/** Options of `decode`. */
export interface DecodeOptions {
  /** Drop `<|im_start|>`, `<|im_end|>` and `<|endoftext|>`, as vLLM does for generated text. Default false. */
  skipSpecialTokens?: boolean;
}

/** Text of `ids`; `decode(encode(s)) === s` for every well-formed string. */
export function decode(ids: readonly number[], options: DecodeOptions = {}): string {
  return decodeTokenBytes(
    ids,
    tokenBytes,
    (id) => options.skipSpecialTokens === true && CONTROL_TOKEN_IDS.has(id),
  );
}

/** Display string of one token; a token holding part of a UTF-8 character shows U+FFFD. */
export function tokenToString(id: number): string {
  return createUtf8Decoder().decode(tokenBytes(id));
}
