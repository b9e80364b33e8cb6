/** @module Which context fields a function agent destructures, read from its source at registration. */

const OPENERS: Record<string, string> = { "{": "}", "[": "]", "(": ")" };

/** Index of the bracket closing the one at `start`, skipping strings and nested brackets; -1 if none. */
function closingIndex(source: string, start: number): number {
  const stack: string[] = [];
  for (let i = start; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === '"' || ch === "'" || ch === "`") {
      for (i++; i < source.length && source[i] !== ch; i++) if (source[i] === "\\") i++;
    } else if (OPENERS[ch]) {
      stack.push(OPENERS[ch]!);
    } else if (ch === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

/** Splits `text` at commas that are not inside brackets or strings. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === "`") {
      for (i++; i < text.length && text[i] !== ch; i++) if (text[i] === "\\") i++;
    } else if (OPENERS[ch]) depth++;
    else if (ch === "}" || ch === "]" || ch === ")") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts.map((part) => part.trim()).filter((part) => part !== "");
}

/**
 * The property names `fn` destructures from its first parameter (`async ({ task, llm: model }) =>`
 * gives `["task", "llm"]`), or null when its first parameter is not an object pattern. Property
 * names survive bundling and minification (they are keys, not variable names), so this is a
 * reliable check at registration where the type system cannot help (plain JavaScript, `any`).
 */
export function destructuredKeys(fn: (...args: never[]) => unknown): string[] | null {
  const source = Function.prototype.toString.call(fn);
  const open = source.indexOf("(");
  if (open < 0) return null;
  let i = open + 1;
  while (i < source.length && /\s/.test(source[i]!)) i++;
  if (source[i] !== "{") return null;
  const close = closingIndex(source, i);
  if (close < 0) return null;
  const keys: string[] = [];
  for (const part of topLevelParts(source.slice(i + 1, close))) {
    if (part.startsWith("...") || part.startsWith("[")) continue;
    const key = /^(?:"([^"]*)"|'([^']*)'|([A-Za-z_$][\w$]*))/.exec(part);
    if (key) keys.push(key[1] ?? key[2] ?? key[3]!);
  }
  return keys;
}
