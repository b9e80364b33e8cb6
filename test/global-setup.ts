import type { TestProject } from "vitest/node";
import { startSandboxHost, type SandboxHost } from "../scripts/sandbox-host";
import { startVllmSimulator, type VllmSimulator } from "../tools/simulator";

/** Time to first token of the slow simulator: long enough to hold a call in flight while a test acts. */
const SLOW_TTFT_MS = 1_500;

let simulators: VllmSimulator[] = [];
let sandbox: SandboxHost | undefined;

/**
 * Starts the vLLM simulators for the whole integration run on free loopback ports: the shared one
 * (no latency) and a slow one, for tests that must act while a call is in flight; and the
 * supervised sandbox host, so code environments in the pool's workerd never run a snippet in it.
 */
export async function setup(project: TestProject): Promise<void> {
  const [simulator, slow, paced, host] = await Promise.all([
    startVllmSimulator({ port: 0, seed: 7 }),
    startVllmSimulator({ port: 0, seed: 7, latency: { ttftMs: SLOW_TTFT_MS, perTokenMs: 0 } }),
    // Answers of 160+ tokens, 25 ms apart: a weight sync lands mid-generation (partial rollouts).
    startVllmSimulator({
      port: 0,
      seed: 7,
      latency: { ttftMs: 0, perTokenMs: 25 },
      tail: { distribution: "pareto", scaleTokens: 160, maxTokens: 240 },
    }),
    startSandboxHost({ memoryLimitMb: 512, processes: 2 }),
  ]);
  sandbox = host;
  project.provide("sandboxUrl", host.url);
  simulators = [simulator, slow, paced];
  project.provide("simulatorUrl", simulator.url);
  project.provide("slowSimulatorUrl", slow.url);
  project.provide("pacedSimulatorUrl", paced.url);
}

export async function teardown(): Promise<void> {
  await Promise.all([...simulators.map((simulator) => simulator.close()), sandbox?.stop()]);
}
