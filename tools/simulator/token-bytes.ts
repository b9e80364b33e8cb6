/** @module Token ids back to text through their bytes, as a byte-level BPE tokenizer decodes. */

/** A UTF-8 decoder that keeps a leading U+FEFF and replaces broken bytes with U+FFFD (Python's errors="replace"). */
export function createUtf8Decoder(): TextDecoder {
  return new TextDecoder("utf-8", { ignoreBOM: true });
}

/** The text of `ids`: their bytes (`bytesOf`) joined, then decoded once; ids `skip` names are left out. */
export function decodeTokenBytes(
  ids: readonly number[],
  bytesOf: (id: number) => Uint8Array,
  skip: (id: number) => boolean,
): string {
  const parts: Uint8Array[] = [];
  let length = 0;
  for (const id of ids) {
    if (skip(id)) continue;
    const bytes = bytesOf(id);
    parts.push(bytes);
    length += bytes.length;
  }
  const all = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.length;
  }
  return createUtf8Decoder().decode(all);
}
