/**
 * @module Text values of any length in a Durable Object's SQLite. A row or value there is capped
 * at about 2 MB; a recorded model call with a 120k-token prompt is more than that. A value keeps
 * its first part in its own row and the rest in `value_parts`, keyed by an owner string.
 */
import type { SqlPort } from "../ports";

/** The statement that creates the parts table (run with the store's own migrations). */
export const CREATE_VALUE_PARTS_TABLE = `CREATE TABLE IF NOT EXISTS value_parts (
  owner TEXT NOT NULL,
  part INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (owner, part)
)`;

/**
 * UTF-16 code units per part: at most 3 UTF-8 bytes each (a surrogate pair is 4 bytes for 2
 * units), so a part is at most 900 KB. SQLite's length limit in a Durable Object (about 2 MB)
 * applies to a whole row, not only to each value, and a step's row holds two first parts (its
 * body and its env snapshot) besides its state: 2 × 900 KB leaves room for the rest, where
 * 1.5 MB parts made a step with a large body and a large snapshot fail with SQLITE_TOOBIG.
 */
export const PART_UNITS = 300_000;

/** Splits `text` into parts of at most `size` code units, never between the halves of a surrogate pair. */
export function splitText(text: string, size = PART_UNITS): string[] {
  if (text.length <= size) return [text];
  const parts: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    const last = text.charCodeAt(end - 1);
    // A high surrogate at the cut: keep it with its low half (cutting would corrupt both into U+FFFD).
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    parts.push(text.slice(start, end));
    start = end;
  }
  return parts;
}

/**
 * Stores the parts after the first of `parts` under `owner` (the first goes in the caller's own
 * row). Writes nothing for a one-part value, so small values cost nothing extra.
 */
export function writeExtraParts(sql: SqlPort, owner: string, parts: readonly string[]): void {
  for (let part = 1; part < parts.length; part++)
    sql.exec(
      `INSERT OR REPLACE INTO value_parts (owner, part, text) VALUES (?, ?, ?)`,
      owner,
      part,
      parts[part]!,
    );
}

/** Every extra part whose owner starts with `prefix`, joined per owner in part order. */
export function readExtraParts(sql: SqlPort, prefix: string): Map<string, string> {
  const rows = sql
    .exec<{ owner: string; text: string }>(
      `SELECT owner, text FROM value_parts WHERE owner >= ? AND owner < ? ORDER BY owner, part`,
      prefix,
      `${prefix}\uffff`,
    )
    .toArray();
  const joined = new Map<string, string>();
  for (const row of rows) joined.set(row.owner, (joined.get(row.owner) ?? "") + row.text);
  return joined;
}
