/** @module `runCode`: environments and graders run model-written code in a fresh sandboxed isolate. */
import { InvalidInputError } from "../errors";
import {
  type CodeSandbox,
  RunCodeInput,
  type RunCodeRequest,
  type RunCodeResult,
} from "../schemas/run-code";
import { AgentContractError } from "./contract-error";

// One sandbox per isolate: the Worker installs it once from its bindings (functions/code-sandbox.ts).
let installed: CodeSandbox | undefined;

/** Makes `sandbox` the one `runCode` uses (the Worker does this at start; tests may install their own). */
export function installCodeSandbox(sandbox: CodeSandbox | undefined): void {
  installed = sandbox;
}

/** The sandbox `runCode` would use, or undefined when none is installed. */
export function installedCodeSandbox(): CodeSandbox | undefined {
  return installed;
}

/**
 * Validates a call, naming the field: `code must be a string`, `code must be at most 1000000
 * bytes`, `timeoutMs must be <= 60000`. Throws InvalidInputError (422) with the zod issues.
 */
export function parseRunCodeRequest(request: unknown): RunCodeInput {
  const parsed = RunCodeInput.safeParse(request);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((issue) => ({
    path: issue.path.join(".") || "(input)",
    message: issue.message,
  }));
  throw new InvalidInputError(`runCode: ${details.map((d) => d.message).join("; ")}`, { details });
}

/**
 * Runs `code` in a fresh isolate with no network and no bindings, and its `tests` against it.
 * A snippet that throws, loops, allocates without bound or floods its output comes back as a
 * result (`ok: false` with `error`, `timedOut` or `outputTruncated`); only a malformed request
 * throws (InvalidInputError naming the field). `maxOutputBytes` defaults to 65536.
 *
 * @example
 * const run = await runCode({ language: "typescript", code: "export const add = (a: number, b: number) => a + b;",
 *   tests: 'import { add } from "./solution.js"; test("adds", () => assert.equal(add(2, 3), 5));', timeoutMs: 2000 });
 * run.tests; // [{ name: "adds", passed: true, message: "" }]
 */
export async function runCode(request: RunCodeRequest): Promise<RunCodeResult> {
  const input = parseRunCodeRequest(request);
  if (!installed)
    throw new AgentContractError(
      "runCode needs a code sandbox: bind a Worker Loader as LOADER (wrangler.toml [[worker_loaders]]) or set SANDBOX_URL",
    );
  return installed.run(input);
}
