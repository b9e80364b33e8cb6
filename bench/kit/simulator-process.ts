/** @module The vLLM simulator in its own process, so its CPU is not counted as anyone else's. */
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { simulatorArgs } from "../../tools/simulator/cli-options";
import type { VllmSimulatorOptions } from "../../tools/simulator/options";

const require = createRequire(import.meta.url);

/** A simulator child process and its URL. */
export interface SimulatorProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Resolves with the first http URL a child prints on stdout (the simulator CLI prints its URL first). */
export function printedUrl(child: ChildProcess, timeoutMs = 30_000): Promise<string> {
  return new Promise<string>((resolveUrl, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /http:\/\/\S+/.exec(out);
      if (match) resolveUrl(match[0]);
    });
    child.once("exit", (code) => reject(new Error(`simulator exited with ${code}`)));
    setTimeout(
      () => reject(new Error(`simulator did not print its URL within ${timeoutMs / 1000} s`)),
      timeoutMs,
    ).unref();
  });
}

/**
 * Starts `tools/simulator/cli.ts` on a free port and waits for its URL: configured by
 * the same options object `startVllmSimulator` takes (turned into flags), or by raw flags.
 */
export async function startSimulatorProcess(
  options: Omit<VllmSimulatorOptions, "host" | "port"> | string[],
): Promise<SimulatorProcess> {
  const args = Array.isArray(options) ? options : simulatorArgs(options);
  const root = resolve(import.meta.dirname, "../..");
  const tsx = require.resolve("tsx/cli");
  const child = spawn(process.execPath, [tsx, "tools/simulator/cli.ts", "--port", "0", ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  // A bench that fails before its `finally` (a port taken, a stack that would not start) must not
  // leave the simulator running: 'exit' fires however this process ends, short of a SIGKILL.
  const stopOnExit = () => void child.kill("SIGTERM");
  process.once("exit", stopOnExit);
  const url = await printedUrl(child);
  return {
    url,
    child,
    stop: async () => {
      process.off("exit", stopOnExit);
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
