/**
 * @module The stack `npm start` and `edge-rollout dev` serve, on either local runner: Miniflare's
 * own API (the default: one workerd, no dev proxy, the Worker reloaded on edit) or `wrangler dev`.
 *
 * Both run the same Worker, bindings and state layout (`<stateDir>/state`), so one state dir can be
 * served by either. Miniflare's is the default because it measures better: `npm run bench:loop --
 * --stack both` runs both side by side (docs/scale.md), and `wrangler dev`'s Node proxy both spends
 * CPU on every request and answers 503 "Your worker restarted mid-request" under load.
 */
import type { VllmSimulator } from "../tools/simulator";
import { startLocalStack, type LocalStackOptions } from "./local-stack";
import { startMiniflareStack } from "./miniflare-stack";

/** The local runners, the default first. */
export const RUNNERS = ["miniflare", "wrangler"] as const;
/** A local runner. */
export type Runner = (typeof RUNNERS)[number];

/** Options: the stack's, plus whether to reload the Worker on edit. */
export interface DevStackOptions extends LocalStackOptions {
  /** Reload the Worker when its sources change (wrangler dev always does). Default false. */
  watch?: boolean;
}

/** A running stack. */
export interface DevStack {
  runner: Runner;
  workerUrl: string;
  modelServerUrl: string;
  simulator: VllmSimulator | undefined;
  /** Resolves (with the reason) if the runner dies on its own; never while it serves. */
  ended: Promise<string>;
  stop(): Promise<void>;
}

/** Starts the stack on `runner`; resolves when the Worker answers /health. */
export async function startDevStack(runner: Runner, options: DevStackOptions): Promise<DevStack> {
  if (runner === "wrangler") {
    const stack = await startLocalStack(options);
    const ended = new Promise<string>((resolve) =>
      stack.wrangler.once("exit", (code) => resolve(`wrangler dev exited (code ${code})`)),
    );
    return {
      runner,
      workerUrl: stack.workerUrl,
      modelServerUrl: stack.modelServerUrl,
      simulator: stack.simulator,
      ended,
      stop: stack.stop,
    };
  }
  const stack = await startMiniflareStack(options);
  return {
    runner,
    workerUrl: stack.workerUrl,
    modelServerUrl: stack.modelServerUrl,
    simulator: stack.simulator,
    ended: stack.ended,
    stop: stack.stop,
  };
}
