import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "../fixtures/free-port";

const root = resolve(import.meta.dirname, "../..");

interface DevStack {
  info: { worker_url: string; dashboard_url: string; model_server_url: string };
  /** Ctrl-C, then the exit code. */
  stop(): Promise<number | null>;
}

/** Runs `edge-rollout dev --json` with `args` until it prints its URLs. */
async function startDev(args: string[]): Promise<DevStack> {
  const child = spawn(process.execPath, [join(root, "bin/edge-rollout.mjs"), "dev", "--simulator-port", "0", "--json", ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((done) => child.once("close", done));
  const info = await new Promise<DevStack["info"]>((done, fail) => {
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("\n")) done(JSON.parse(stdout.split("\n")[0]!));
    });
    child.once("close", (code) => fail(new Error(`dev exited ${code} before printing its URLs`)));
  });
  return { info, stop: () => (child.kill("SIGINT"), exited) };
}

describe("edge-rollout dev (end to end)", () => {
  it("starts the stack, prints its URLs as JSON, serves /health, and stops with exit 0 on Ctrl-C", async () => {
    const port = await freePort();
    const stateDir = `.tmp/e2e-cli-dev-${process.pid}`;
    const { info, stop } = await startDev(["--port", String(port), "--state-dir", stateDir]);
    expect(info.worker_url).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(`${info.worker_url}/health`)).status).toBe(200);
    expect(info.dashboard_url).toBe(`${info.worker_url}/`);
    expect(await (await fetch(info.dashboard_url)).text()).toContain("<h1>Overview</h1>");
    expect((await fetch(`${info.model_server_url}/health`)).status).toBe(200);
    expect(await stop()).toBe(0);
    await expect(fetch(`${info.worker_url}/health`)).rejects.toThrow();
    rmSync(resolve(root, stateDir), { recursive: true, force: true });
  }, 120_000);

  it("keeps local state across restarts of the same --state-dir, and --reset starts it empty", async () => {
    const stateDir = `.tmp/e2e-cli-dev-reset-${process.pid}`;
    const args = async () => ["--port", String(await freePort()), "--state-dir", stateDir];
    const rolloutId = `kept-${process.pid}`;
    const first = await startDev(await args());
    const created = await fetch(`${first.info.worker_url}/v1/rollouts`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ agent: "external", rollout_id: rolloutId, task: { problem: "p" } }) });
    expect(created.status).toBe(202);
    expect(await first.stop()).toBe(0);

    const second = await startDev(await args());
    expect((await fetch(`${second.info.worker_url}/v1/rollouts/${rolloutId}`)).status).toBe(200);
    expect(await second.stop()).toBe(0);

    const reset = await startDev([...(await args()), "--reset"]);
    expect((await fetch(`${reset.info.worker_url}/v1/rollouts/${rolloutId}`)).status).toBe(404);
    expect(await reset.stop()).toBe(0);
    rmSync(resolve(root, stateDir), { recursive: true, force: true });
  }, 240_000);
});
