/** @module What `runCode` accepts and answers: one snippet run in a fresh sandboxed isolate. */
import { z } from "zod";
import { JsonValue } from "./json";

/** Largest `code` (and `tests`) accepted, in UTF-8 bytes: 1 MB. */
export const MAX_CODE_BYTES = 1_000_000;
/** Longest wall-clock budget a call may ask for: 60 s. */
export const MAX_TIMEOUT_MS = 60_000;
/** Largest `maxOutputBytes` a call may ask for: 4 MB (output plus result stay well under workerd's 32 MiB limit on an RPC value). */
export const MAX_OUTPUT_BYTES = 4_000_000;

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).byteLength;

const SourceText = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .refine((text) => utf8Bytes(text) <= MAX_CODE_BYTES, {
      message: `${field} must be at most ${MAX_CODE_BYTES} bytes`,
    });

/**
 * One call. `code` is an ES module (`export function add(a, b) {…}`); `entry` names an exported
 * function to call with no arguments, its awaited value is the `result`; `tests` is a module that
 * imports from `./solution.js` and registers cases with the global `test(name, fn)`, using the
 * global `assert` (`equal`, `deepEqual`, `ok`, `throws`). In Python, `code` runs as module
 * `solution`, `entry` names one of its functions (its value goes through `json.dumps`), and
 * `tests` is a module whose `test*` functions are the cases (`from solution import add`, plain
 * `assert`).
 */
export const RunCodeInput = z.strictObject({
  language: z.enum(["javascript", "typescript", "python"], {
    error: 'language must be "javascript", "typescript" or "python"',
  }),
  code: SourceText("code"),
  entry: z
    .string()
    .regex(/^[A-Za-z_$][\w$]*$/, { message: "entry must be an identifier" })
    .optional(),
  tests: SourceText("tests").optional(),
  /**
   * Wall-clock budget, 1..60000 ms; production also caps CPU time at this figure (`limits.cpuMs`).
   * A Python call may take up to PYTHON_BOOT_ALLOWANCE_MS (5 s) more to boot its interpreter.
   */
  timeoutMs: z
    .int({ error: "timeoutMs must be an integer" })
    .min(1, { message: "timeoutMs must be >= 1" })
    .max(MAX_TIMEOUT_MS, { message: `timeoutMs must be <= ${MAX_TIMEOUT_MS}` }),
  /** Captured stdout + stderr beyond this many bytes is cut, and a result whose JSON is larger is an error; default 64 KB. */
  maxOutputBytes: z.int().min(1).max(MAX_OUTPUT_BYTES).default(65_536),
});
/** A validated call (defaults applied). */
export type RunCodeInput = z.output<typeof RunCodeInput>;
/** A call as written by its caller (`maxOutputBytes` optional). */
export type RunCodeRequest = z.input<typeof RunCodeInput>;

/** A thrown value, as the sandbox saw it. */
export const RunCodeError = z.object({
  name: z.string(),
  message: z.string(),
  stack: z.string().optional(),
});
/** A thrown value, as the sandbox saw it. */
export type RunCodeError = z.infer<typeof RunCodeError>;

/** One unit test's outcome. */
export const TestOutcome = z.object({ name: z.string(), passed: z.boolean(), message: z.string() });
/** One unit test's outcome. */
export type TestOutcome = z.infer<typeof TestOutcome>;

/**
 * What happened. `ok` is true when the module loaded, `entry` (if any) returned and no test
 * failed. A snippet that throws, loops or floods its output is a result (`error`, `timedOut`,
 * `outputTruncated`), never an exception in the caller.
 */
export const RunCodeResult = z.object({
  ok: z.boolean(),
  result: JsonValue.optional(),
  stdout: z.string(),
  stderr: z.string(),
  error: RunCodeError.optional(),
  timedOut: z.boolean(),
  outputTruncated: z.boolean(),
  durationMs: z.number(),
  tests: z.array(TestOutcome),
});
/** What happened. */
export type RunCodeResult = z.infer<typeof RunCodeResult>;

/** Something that runs one validated call in a fresh isolate (a Worker Loader, or a supervised sandbox host). */
export interface CodeSandbox {
  run(input: RunCodeInput): Promise<RunCodeResult>;
}
