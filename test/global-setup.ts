import type { TestProject } from "vitest/node";
import { startVllmSimulator, type VllmSimulator } from "../src/testing";

let simulator: VllmSimulator | undefined;

/** Starts one vLLM simulator on a free loopback port for the whole integration run. */
export async function setup(project: TestProject): Promise<void> {
  simulator = await startVllmSimulator({ port: 0, seed: 7 });
  project.provide("simulatorUrl", simulator.url);
}

export async function teardown(): Promise<void> {
  await simulator?.close();
}
