import { readFile } from "node:fs/promises";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { pyodideUploads } from "../scripts/pyodide-uploads";
import { startSandboxHost, type SandboxHost } from "../scripts/sandbox-host";
import { startVllmSimulator, type VllmSimulator } from "../tools/simulator";

/** Time to first token of the slow simulator: long enough to hold a call in flight while a test acts. */
const SLOW_TTFT_MS = 1_500;

let simulators: VllmSimulator[] = [];
let sandbox: SandboxHost | undefined;
let pyodideFiles: Server | undefined;

/**
 * Serves node_modules/pyodide's files on loopback at their R2 keys (`GET /<key>`), so a test in
 * workerd can put them into its own R2 as scripts/upload-pyodide.ts would (workerd reads no files).
 */
async function servePyodideFiles(): Promise<Server> {
  const files = new Map(pyodideUploads().map((upload) => [`/${upload.key}`, upload.file]));
  const server = createServer((request, response) => {
    const file = files.get(request.url ?? "");
    if (!file) return void response.writeHead(404).end();
    readFile(file).then(
      (bytes) => response.writeHead(200, { "content-length": bytes.byteLength }).end(bytes),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

/**
 * Starts the vLLM simulators for the whole integration run on free loopback ports: the shared one
 * (no latency) and a slow one, for tests that must act while a call is in flight; and the
 * supervised sandbox host, so code environments in the pool's workerd never run a snippet in it.
 */
export async function setup(project: TestProject): Promise<void> {
  // Answers of 160+ tokens, 25 ms apart: a weight sync lands mid-generation (partial rollouts).
  const pacedOptions = {
    port: 0,
    seed: 7,
    latency: { ttftMs: 0, perTokenMs: 25 },
    tail: { distribution: "pareto" as const, scaleTokens: 160, maxTokens: 240 },
  };
  const [simulator, slow, paced, pacedPeer, partialRollouts, pressure, host] = await Promise.all([
    startVllmSimulator({ port: 0, seed: 7 }),
    startVllmSimulator({ port: 0, seed: 7, latency: { ttftMs: SLOW_TTFT_MS, perTokenMs: 0 } }),
    startVllmSimulator(pacedOptions),
    // The paced one's peer: two replicas of one backend (interrupt-replica-health), never reconfigured.
    startVllmSimulator(pacedOptions),
    // The partial-rollout tests reconfigure theirs (pace, policy version): a simulator of their own,
    // so no other file sees it change under it (issue 52).
    startVllmSimulator(pacedOptions),
    // A KV cache of 24 blocks of 16 tokens and 10 ms steps: three 350-token calls overfill it and
    // preempt each other (the pressure-control test's replica, no one else's).
    startVllmSimulator({
      port: 0,
      seed: 7,
      tokenizer: "toy",
      prefixCache: { blockSize: 16, capacityBlocks: 24 },
      engine: {
        costModel: { fixedMs: 10, perSequenceMs: 0, perPrefillTokenMs: 0, perKContextTokensMs: 0 },
      },
    }),
    startSandboxHost({ memoryLimitMb: 512, processes: 2 }),
  ]);
  pyodideFiles = await servePyodideFiles();
  project.provide(
    "pyodideFilesUrl",
    `http://127.0.0.1:${(pyodideFiles.address() as AddressInfo).port}`,
  );
  sandbox = host;
  project.provide("sandboxUrl", host.url);
  simulators = [simulator, slow, paced, pacedPeer, partialRollouts, pressure];
  project.provide("simulatorUrl", simulator.url);
  project.provide("slowSimulatorUrl", slow.url);
  project.provide("pacedSimulatorUrl", paced.url);
  project.provide("pacedPeerSimulatorUrl", pacedPeer.url);
  project.provide("partialRolloutsSimulatorUrl", partialRollouts.url);
  project.provide("pressureSimulatorUrl", pressure.url);
}

export async function teardown(): Promise<void> {
  pyodideFiles?.close();
  await Promise.all([...simulators.map((simulator) => simulator.close()), sandbox?.stop()]);
}
