import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "../fixtures/free-port";

const root = resolve(import.meta.dirname, "../..");

describe("edge-rollout dev (end to end)", () => {
  it("starts the stack, prints its URLs as JSON, serves /health, and stops with exit 0 on Ctrl-C", async () => {
    const port = await freePort();
    const stateDir = `.tmp/e2e-cli-dev-${process.pid}`;
    const child = spawn(process.execPath, [join(root, "bin/edge-rollout.mjs"), "dev", "--port", String(port), "--simulator-port", "0", "--state-dir", stateDir, "--json"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((done) => child.once("close", done));
    const info = await new Promise<{ worker_url: string; dashboard_url: string; model_server_url: string }>((done, fail) => {
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes("\n")) done(JSON.parse(stdout.split("\n")[0]!));
      });
      child.once("close", (code) => fail(new Error(`dev exited ${code} before printing its URLs`)));
    });
    expect(info.worker_url).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(`${info.worker_url}/health`)).status).toBe(200);
    expect(info.dashboard_url).toBe(`${info.worker_url}/`);
    expect(await (await fetch(info.dashboard_url)).text()).toContain("<h1>Overview</h1>");
    expect((await fetch(`${info.model_server_url}/health`)).status).toBe(200);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    await expect(fetch(`${info.worker_url}/health`)).rejects.toThrow();
    rmSync(resolve(root, stateDir), { recursive: true, force: true });
  }, 120_000);
});
