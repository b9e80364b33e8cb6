/** @module Ctrl-C while a command waits: what to do with the work, and how to ask. */
import { createInterface } from "node:readline";

/** What `submit` does with its batch on Ctrl-C: ask (a terminal), cancel it, or leave it running. */
export type InterruptPolicy = "ask" | "cancel" | "leave";

/** The interrupt policies `--on-interrupt` accepts. */
export const INTERRUPT_POLICIES: readonly InterruptPolicy[] = ["ask", "cancel", "leave"];

/**
 * `--yes` means cancel; an explicit `--on-interrupt` wins over both; otherwise ask when stdin is a
 * terminal and leave the batch running when it is not (a script's SIGINT never destroys work
 * nobody confirmed; the batch id is printed so it can be cancelled or followed later).
 */
export function resolveInterruptPolicy(
  options: { yes?: boolean; onInterrupt?: InterruptPolicy | undefined },
  stdinIsTTY: boolean,
): InterruptPolicy {
  if (options.onInterrupt)
    return options.onInterrupt === "ask" && !stdinIsTTY ? "leave" : options.onInterrupt;
  if (options.yes) return "cancel";
  return stdinIsTTY ? "ask" : "leave";
}

/**
 * Aborts its signal on the first SIGINT or SIGTERM after it is created, so the command can stop
 * cleanly; a second one exits at once (130), for a user who does not want to wait.
 * `dispose()` restores the default behaviour.
 */
export class InterruptWatch {
  readonly #controller = new AbortController();
  readonly #handler = () => {
    if (this.#controller.signal.aborted) process.exit(130);
    this.#controller.abort();
  };

  constructor() {
    process.on("SIGINT", this.#handler);
    process.on("SIGTERM", this.#handler);
  }

  /** Aborts on the first signal. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  dispose(): void {
    process.off("SIGINT", this.#handler);
    process.off("SIGTERM", this.#handler);
  }
}

/**
 * Asks a yes/no question on the terminal (stderr); a second Ctrl-C or end of input answers no.
 */
export function askYesNo(question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    let settled = false;
    const finish = (answer: boolean) => {
      if (settled) return;
      settled = true;
      rl.close();
      resolve(answer);
    };
    rl.on("SIGINT", () => finish(false));
    rl.on("close", () => finish(false));
    rl.question(`${question} [y/N] `, (answer) => finish(/^y(es)?$/i.test(answer.trim())));
  });
}

/** Sleeps `ms`, waking early (without throwing) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
