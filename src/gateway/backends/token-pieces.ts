/**
 * @module Vocabulary pieces (`convert_ids_to_tokens`, what vLLM's `/tokenize` returns as
 * `token_strs`) back to the text each token stands for. Byte-level BPE tokenizers (GPT-2, Qwen,
 * Llama 3) spell every byte as one printable character (`Ġ` is a space, `Ċ` a newline); this
 * undoes that map. A piece with a character outside it is an added token (`<|im_end|>`) or a
 * SentencePiece piece (`▁is`) and is shown as spelt, `▁` as a space.
 */

/** GPT-2's `bytes_to_unicode`, inverted: the character that spells a byte → that byte. */
const BYTE_OF: ReadonlyMap<number, number> = (() => {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const map = new Map<number, number>();
  for (const b of printable) map.set(b, b);
  let shifted = 0;
  for (let b = 0; b < 256; b++) if (!printable.includes(b)) map.set(256 + shifted++, b);
  return map;
})();

/**
 * The text of one token from its vocabulary piece. A token holding only part of a UTF-8
 * character decodes to U+FFFD, as vLLM's logprob `token` strings show it.
 */
export function pieceText(piece: string): string {
  const bytes: number[] = [];
  for (const char of piece) {
    const byte = BYTE_OF.get(char.codePointAt(0)!);
    if (byte === undefined) return piece.replace(/\u2581/g, " ");
    bytes.push(byte);
  }
  return new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(new Uint8Array(bytes));
}
