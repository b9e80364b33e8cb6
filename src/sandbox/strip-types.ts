/**
 * @module TypeScript to JavaScript before a snippet is loaded: Workers load JavaScript modules only.
 * Sucrase's `typescript` transform removes types and nothing else (imports stay ES modules, no
 * down-levelling), in pure JavaScript that runs in workerd (about 200 KB minified in the bundle).
 */
import { transform } from "sucrase";

/** `source` with its TypeScript syntax removed; throws a SyntaxError on code Sucrase cannot parse. */
export function stripTypes(source: string): string {
  try {
    return transform(source, { transforms: ["typescript"], disableESTransforms: true }).code;
  } catch (error) {
    throw new SyntaxError((error as Error).message);
  }
}
