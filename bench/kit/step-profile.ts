/**
 * @module The per-step CPU breakdown the benches print: a few rollouts run while the Worker's
 * isolate is profiled (V8 sampling over DevTools), split into the phases of a step. Run apart
 * from the timed runs, since profiling slows the isolate.
 */
import { writeFileSync } from "node:fs";
import { basename } from "node:path";
import type { RolloutClient } from "../../scripts/rollout-client";
import type { BenchStack } from "./bench-stack";
import { formatPhases, phaseTimes } from "./cpu-phases";
import { loadSourceMap } from "./source-map";

/** The rollouts a profiled run makes. */
export interface ProfiledShape {
  rollouts: number;
  steps: number;
  maxTokens: number;
  firstTopic: number;
  /** Each rollout's `group` field by index (`{}`: created alone), as the timed rounds place theirs. */
  groupOf?: (index: number) => object;
}

/** Runs `shape` under the profiler; returns the printed lines (or one line saying why not). */
export async function profileSteps(
  stack: BenchStack,
  client: RolloutClient,
  shape: ProfiledShape,
): Promise<string[]> {
  if (!stack.bundlePath)
    return [
      `per-phase CPU: not available on ${stack.kind} (profiles need the Miniflare stack's inspector)`,
    ];
  const config = { max_steps: shape.steps, max_tokens_per_call: shape.maxTokens };
  const profiled = await stack.profile(async () => {
    const ends = await Promise.all(
      Array.from({ length: shape.rollouts }, async (_, i) => {
        const id = await client.create({
          agent: "dialogue",
          task: {
            problem: `Tell me about topic ${shape.firstTopic + i}.`,
            extra_args: { turns: shape.steps },
          },
          config,
          ...shape.groupOf?.(i),
        });
        return client.waitForEnd(id, 20);
      }),
    );
    return ends.reduce((n, end) => n + end.steps, 0);
  });
  if (!profiled) return ["per-phase CPU: the inspector did not answer"];
  const steps = profiled.result;
  if (process.env.BENCH_PROFILE_OUT)
    writeFileSync(
      process.env.BENCH_PROFILE_OUT,
      JSON.stringify({ bundlePath: stack.bundlePath, steps, profile: profiled.profile }),
    );
  const times = phaseTimes(
    profiled.profile,
    loadSourceMap(`${stack.bundlePath}.map`),
    basename(stack.bundlePath),
  );
  return [
    `per-phase CPU per step, V8 sampling profile of the Worker's isolate (driver, sessions, shards: one isolate locally), ${shape.rollouts} rollouts × ${shape.steps} steps, not timed:`,
    ...formatPhases(times, Math.max(1, steps)),
    "  (each sample counts for the innermost frame of our code on its stack: zod, JSON, SQLite and RPC time count for the code that asked;",
    "   the total is above the /proc figure: sampling counts wall time on the isolate's thread, including time the OS ran other processes)",
  ];
}
