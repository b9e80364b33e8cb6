/** @module Grading final answers written as \boxed{…}. */
import type { JsonValue } from "../schemas/json";

/** The content of the last `\boxed{…}` in `text` (braces may nest), or null. */
export function extractBoxed(text: string): string | null {
  const start = text.lastIndexOf("\\boxed{");
  if (start < 0) return null;
  let depth = 0;
  for (let i = start + "\\boxed".length; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0)
      return text.slice(start + "\\boxed{".length, i).trim();
  }
  return null;
}

/** 1 when the boxed answer equals the ground truth (numerically when both are numbers), else 0. */
export function gradeBoxedAnswer(text: string, groundTruth: JsonValue): number {
  const answer = extractBoxed(text);
  if (answer === null || groundTruth === null) return 0;
  const expected = String(groundTruth).trim();
  const a = Number(answer.replace(/,/g, ""));
  const b = Number(expected);
  // Absolute 1e-6 covers answers rounded to six decimals (formatNumber); a relative 1e-6 would
  // accept an off-by-one integer above a million. The 1e-12 relative term only absorbs float noise.
  if (answer !== "" && expected !== "" && Number.isFinite(a) && Number.isFinite(b))
    return Math.abs(a - b) <= Math.max(1e-6, 1e-12 * Math.abs(b)) ? 1 : 0;
  return answer === expected ? 1 : 0;
}
