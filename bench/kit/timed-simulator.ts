/** @module The vLLM simulator in its own process, reporting each chat call's service time (see timed-simulator-child.ts). */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { printedUrl } from "./simulator-process";

/** A simulator child process that measures its own per-request service time. */
export interface TimedSimulator {
  /** Root URL, without `/v1`. */
  url: string;
  /** Service times (ms) of the chat calls answered since the previous `take()`, in completion order. */
  take(): Promise<number[]>;
  stop(): Promise<void>;
}

/** Starts the simulator CLI with `args` (e.g. latency flags) on a free loopback port. */
export async function startTimedSimulator(args: string[]): Promise<TimedSimulator> {
  const root = resolve(import.meta.dirname, "../..");
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "bench/kit/timed-simulator-child.ts", "--port", "0", ...args],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit", "ipc"],
    },
  );
  const url = await printedUrl(child);
  return {
    url,
    take: () =>
      new Promise<number[]>((resolveTimes, reject) => {
        const timer = setTimeout(
          () => reject(new Error("simulator did not answer take within 5 s")),
          5_000,
        );
        child.once("message", (message) => {
          clearTimeout(timer);
          resolveTimes((message as { serviceMs: number[] }).serviceMs);
        });
        child.send("take");
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
