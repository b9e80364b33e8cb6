/**
 * @module The Python processes bench:learn runs: the policy engine (the simulator's token source)
 * and the GRPO trainer, whose one JSON line per step it reads back.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { printedUrl } from "../kit/simulator-process";
import { PYTHON_ROOT } from "./learn-setup";

/** One step as the trainer reports it (edge_rollout.learn.trainer). */
export interface StepLine {
  step: number;
  reward: number;
  agreement_max: number;
  agreement_mean: number;
  tokens: number;
  samples: number;
  version_mismatches: number;
  /** Responses whose trained tokens came from two versions (an interrupting sync cut them). */
  spanned: number;
  policy_version: number;
  generate_s: number;
  train_s: number;
  sync_s: number;
}

/** A running engine and its URL. */
export interface EngineProcess {
  url: string;
  child: ChildProcess;
}

/** Starts the policy engine on `checkpoint` and points the simulator at it. */
export async function startEngine(
  simulatorUrl: string,
  checkpoint: string,
  logprobsMode: "raw_logprobs" | "processed_logprobs",
  version: number,
): Promise<EngineProcess> {
  const child = spawn(
    "python3",
    [
      ...["-m", "edge_rollout.learn.engine_server", "--checkpoint", checkpoint, "--port", "0"],
      ...["--logprobs-mode", logprobsMode, "--weight-version", String(version)],
    ],
    { cwd: PYTHON_ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  const stopOnExit = () => void child.kill();
  process.once("exit", stopOnExit);
  child.once("exit", () => process.off("exit", stopOnExit));
  const url = await printedUrl(child);
  const configured = await fetch(`${simulatorUrl}/sim/config`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ engine: { tokenSourceUrl: url } }),
  });
  if (!configured.ok) throw new Error(`configuring the simulator: ${await configured.text()}`);
  return { url, child };
}

/** Runs the trainer with `args` to its end, calling `onStep` per step; answers every step. */
export async function runTrainer(
  args: string[],
  onStep: (line: StepLine) => void = () => undefined,
): Promise<StepLine[]> {
  const trainer = spawn("python3", ["-m", "edge_rollout.learn.trainer", ...args], {
    cwd: PYTHON_ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((done) => trainer.once("exit", done));
  const lines: StepLine[] = [];
  for await (const text of createInterface({ input: trainer.stdout! })) {
    const line = JSON.parse(text) as StepLine;
    lines.push(line);
    onStep(line);
  }
  const code = await exited;
  if (code !== 0 || lines.length === 0) throw new Error(`the trainer exited with ${code}`);
  return lines;
}
