/** @module The code a model's reply carries: its last fenced block (```js, ```ts or bare). */

/** The body of the last fenced code block in `text`, or null when there is none. */
export function lastCodeBlock(text: string): string | null {
  const blocks = [...text.matchAll(/```[A-Za-z]*[^\n]*\n([\s\S]*?)```/g)];
  const last = blocks.at(-1);
  return last === undefined ? null : (last[1] ?? "");
}
