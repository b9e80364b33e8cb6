/** @module What one arm of `bench:sampling` cost the simulator: tokens generated and modelled engine time, read from `/sim/stats`. */
import type { SimulatorStats } from "../../tools/simulator/stats";

/** The engine's counters at one moment. */
export interface EngineCounters {
  generationTokens: number;
  promptTokens: number;
  preemptions: number;
  engineMs: number;
  running: number;
  waiting: number;
}

/** What the engine did between two readings. */
export interface EngineUsage {
  generationTokens: number;
  promptTokens: number;
  preemptions: number;
  engineMs: number;
}

/** Reads the replica's counters. */
export async function readEngine(simulatorUrl: string): Promise<EngineCounters> {
  const response = await fetch(`${simulatorUrl}/sim/stats`);
  if (!response.ok) throw new Error(`/sim/stats answered ${response.status}`);
  const { replica } = (await response.json()) as SimulatorStats;
  if (!replica) throw new Error("/sim/stats has no replica counters (an engine-less simulator?)");
  const { generationTokens, promptTokens, preemptions, engineMs, running, waiting } = replica;
  return { generationTokens, promptTokens, preemptions, engineMs, running, waiting };
}

/**
 * Waits until the engine runs and queues nothing, and says how long that took. A batch is done
 * once every rollout is terminal, but a cancelled rollout's upstream call ends when the simulator
 * sees the connection close: the next arm starts on an idle engine, and the tokens counted for
 * this arm include what its cancelled calls generated before they stopped.
 */
export async function waitIdle(
  simulatorUrl: string,
  timeoutMs = 60_000,
): Promise<{ counters: EngineCounters; waitedMs: number }> {
  const started = performance.now();
  for (;;) {
    const counters = await readEngine(simulatorUrl);
    const waitedMs = performance.now() - started;
    if (counters.running === 0 && counters.waiting === 0) return { counters, waitedMs };
    if (waitedMs > timeoutMs)
      throw new Error(
        `the simulator still runs ${counters.running} and queues ${counters.waiting} requests ${timeoutMs / 1000} s after the batch was done`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The counters' growth from `before` to `after`. */
export function usageBetween(before: EngineCounters, after: EngineCounters): EngineUsage {
  return {
    generationTokens: after.generationTokens - before.generationTokens,
    promptTokens: after.promptTokens - before.promptTokens,
    preemptions: after.preemptions - before.preemptions,
    engineMs: after.engineMs - before.engineMs,
  };
}
