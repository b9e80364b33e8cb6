/**
 * @module Installs the isolate's code sandbox for `runCode`: the local sandbox host when
 * SANDBOX_URL is set (`npm start`, the integration tests), else the LOADER Worker Loader binding
 * (production, where the platform's `limits.cpuMs` and 128 MB per isolate contain a runaway).
 */
import { env } from "cloudflare:workers";
import type { CodeSandbox, RunCodeInput } from "../src/schemas/run-code";
import { createLoaderSandbox } from "../src/sandbox/loader-sandbox";
import { createRemoteSandbox } from "../src/sandbox/remote-sandbox";
import { installCodeSandbox } from "../src/sdk/run-code";
import type { AppEnv } from "./env";

/** The sandbox for these bindings, or undefined when there is neither SANDBOX_URL nor LOADER. */
export function codeSandboxFor(
  bindings: Pick<AppEnv, "SANDBOX_URL" | "LOADER">,
): CodeSandbox | undefined {
  if (bindings.SANDBOX_URL) return createRemoteSandbox(bindings.SANDBOX_URL);
  if (bindings.LOADER) return createLoaderSandbox(bindings.LOADER);
  return undefined;
}

// Chosen at the first call, from the bindings of this isolate (the same for every request).
let chosen: CodeSandbox | undefined;

installCodeSandbox({
  run(input: RunCodeInput) {
    chosen ??= codeSandboxFor(env as AppEnv);
    if (!chosen)
      throw new Error("runCode: this Worker has neither a LOADER binding nor SANDBOX_URL");
    return chosen.run(input);
  },
});
