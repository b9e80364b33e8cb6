/**
 * @module The local stack for the Python tests, and nothing else: no demo rollouts. Prints one
 * JSON line `{"url": …}` once the Worker answers /health, and stops when stdin closes (the test
 * process ended, however it ended) or on SIGTERM/SIGINT, removing its state. The stack runs on
 * Miniflare's API (scripts/miniflare-stack.ts): no wrangler dev proxy spending CPU on every request.
 *
 * Usage: node node_modules/tsx/dist/cli.mjs clients/python/tests/serve-stack.ts --port <port>
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { startMiniflareStack } from "../../../scripts/miniflare-stack";

const { values } = parseArgs({ options: { port: { type: "string" }, seed: { type: "string", default: "7" } } });
if (!values.port) throw new Error("--port is required");
const port = Number(values.port);

const stateDir = `.tmp/python-stack-${process.pid}`;
const stack = await startMiniflareStack({ workerPort: port, simulator: { port: 0, seed: Number(values.seed) }, stateDir });
let stopping = false;
const shutdown = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await stack.stop();
  rmSync(resolve(import.meta.dirname, "../../..", stateDir), { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
process.stdin.on("end", () => void shutdown());
process.stdin.on("error", () => void shutdown());
process.stdin.resume();
process.stdout.write(`${JSON.stringify({ url: stack.workerUrl, model_server: stack.modelServerUrl })}\n`);
