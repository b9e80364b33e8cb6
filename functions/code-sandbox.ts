/**
 * @module Installs the isolate's code sandbox for `runCode`: the local sandbox host when
 * SANDBOX_URL is set (`npm start`, the integration tests), else the LOADER Worker Loader binding
 * (production, where the platform's `limits.cpuMs` and 128 MB per isolate contain a runaway).
 */
import { env } from "cloudflare:workers";
import type { CodeSandbox, RunCodeInput } from "../src/schemas/run-code";
import {
  createBucketPythonSandbox,
  createLoaderSandbox,
  createRemoteSandbox,
  SANDBOX_COMPATIBILITY_DATE,
  type PyodideBucket,
} from "../src/sandbox";
import { installCodeSandbox } from "../src/sdk";
import type { AppEnv } from "./env";

/**
 * The sandbox for these bindings, or undefined when there is neither SANDBOX_URL nor LOADER. On
 * LOADER, Python calls read Pyodide from TRAJECTORIES (src/sandbox/bucket-python-sandbox.ts); the
 * sandbox keeps what it read, so keep one per isolate.
 */
export function codeSandboxFor(
  bindings: Pick<AppEnv, "SANDBOX_URL" | "LOADER"> & { TRAJECTORIES?: PyodideBucket },
): CodeSandbox | undefined {
  if (bindings.SANDBOX_URL) return createRemoteSandbox(bindings.SANDBOX_URL);
  if (!bindings.LOADER) return undefined;
  const python = bindings.TRAJECTORIES
    ? createBucketPythonSandbox(bindings.LOADER, bindings.TRAJECTORIES, SANDBOX_COMPATIBILITY_DATE)
    : undefined;
  return createLoaderSandbox(bindings.LOADER, python);
}

// Chosen at the first call, from the bindings of this isolate (the same for every request); it
// holds Pyodide's files and snapshot once a Python call has read them.
let chosen: CodeSandbox | undefined;

installCodeSandbox({
  run(input: RunCodeInput) {
    chosen ??= codeSandboxFor(env as AppEnv);
    if (!chosen)
      throw new Error("runCode: this Worker has neither a LOADER binding nor SANDBOX_URL");
    return chosen.run(input);
  },
});
