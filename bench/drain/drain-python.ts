/**
 * @module The Python drainer of `bench:drain --from-worker` (drain_worker_bench.py) as a
 * child driven round by round: each round's batches are published while it waits, then one line
 * on its stdin, `{"round": r, "arrow": "<batch id>", "json": "<batch id>"}`, has it drain them;
 * it answers `@drained r` on stdout (its other lines pass through), and at the end of its stdin
 * prints its report and exits.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";

/** A started drainer. */
export interface PythonDrainer {
  /** Drains a round's two batches; rejects if the drainer exits first. */
  drain(round: number, batches: { arrow: string; json: string }): Promise<void>;
  /** Ends its input; resolves with its exit code once it has printed its report. */
  finish(): Promise<number>;
  /** Kills it if it still runs (a run that failed before `finish`). */
  stop(): void;
}

/** Starts `python bench/drain/drain_worker_bench.py ...args`, bounded to `timeoutMs` in all. */
export function startPythonDrainer(
  python: string,
  args: string[],
  timeoutMs = 900_000,
): PythonDrainer {
  const child = spawn(python, ["bench/drain/drain_worker_bench.py", ...args], {
    cwd: resolve(import.meta.dirname, "../.."),
    stdio: ["pipe", "pipe", "inherit"],
  });
  // Bounded: a stuck child is killed rather than left running.
  const guard = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const exited = new Promise<number>((done) => {
    child.once("error", (error) => {
      console.error(
        `bench:drain needs ${python} with numpy and pyarrow (clients/python): ${error.message}`,
      );
      done(1);
    });
    child.once("exit", (code) => {
      clearTimeout(guard);
      done(code ?? 1);
    });
  });
  let waiting: { round: number; done: () => void } | undefined;
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const match = /^@drained (\d+)$/.exec(line);
    if (!match) console.log(line);
    else if (waiting && Number(match[1]) === waiting.round) waiting.done();
  });
  return {
    drain(round, batches) {
      return new Promise<void>((done, fail) => {
        waiting = { round, done };
        void exited.then((code) =>
          fail(new Error(`the Python drainer exited with ${code} during round ${round}`)),
        );
        child.stdin!.write(`${JSON.stringify({ round, ...batches })}\n`);
      });
    },
    finish() {
      child.stdin!.end();
      return exited;
    },
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
