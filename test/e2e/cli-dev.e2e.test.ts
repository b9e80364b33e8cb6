import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "../../tools/simulator/free-port";
import { allGone, childrenNamed } from "../fixtures/processes";

const root = resolve(import.meta.dirname, "../..");

interface DevStack {
  info: {
    runner: string;
    worker_url: string;
    dashboard_url: string;
    model_server_url: string;
    pid: number;
  };
  /** The exit code once the command ends on its own. */
  exited: Promise<number | null>;
  /** Ctrl-C, then the exit code. */
  stop(): Promise<number | null>;
  /** What the command printed on stderr so far (its notes, the runtime's warnings). */
  stderr(): string;
  /** Everything the command printed on stdout so far (with --json: its JSON documents, one per line). */
  stdout(): string;
}

/** Fails with `what` and the command's stderr if `promise` takes longer than 60 s, so a hang names its step. */
async function within<T>(
  what: string,
  stack: Pick<DevStack, "stderr">,
  promise: Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, fail) =>
      (timer = setTimeout(
        () => fail(new Error(`${what}: no answer in 60 s; dev's stderr:\n${stack.stderr()}`)),
        60_000,
      )),
  );
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Runs `edge-rollout dev --json` with `args` until it prints its URLs. */
async function startDev(args: string[]): Promise<DevStack> {
  const child = spawn(
    process.execPath,
    [join(root, "bin/edge-rollout.mjs"), "dev", "--simulator-port", "0", "--json", ...args],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // "exit", not "close": a grandchild holding an inherited pipe must not hide whether dev ended
  // (stop() checks separately that dev's own children went with it).
  const exited = new Promise<number | null>((done) => child.once("exit", done));
  const started = new Promise<DevStack["info"]>((done, fail) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("\n")) done(JSON.parse(stdout.split("\n")[0]!));
    });
    child.once("close", (code) =>
      fail(new Error(`dev exited ${code} before printing its URLs; stderr:\n${stderr}`)),
    );
  });
  const stack = { stderr: () => stderr };
  const info = await within("starting", stack, started).catch((error: unknown) => {
    child.kill("SIGKILL");
    throw error;
  });
  const stop = async () => {
    const children = [
      ...childrenNamed(child.pid!, "workerd"),
      ...childrenNamed(child.pid!, "esbuild"),
    ];
    child.kill("SIGINT");
    const code = await within("stopping on Ctrl-C", stack, exited);
    await within("dev's workerd and esbuild ending with it", stack, allGone(children));
    return code;
  };
  return { info, exited, stderr: stack.stderr, stdout: () => stdout, stop };
}

describe("edge-rollout dev (end to end)", () => {
  it.each(["miniflare", "wrangler"])(
    "starts the stack on runner %s, prints its URLs as JSON, serves /health, and stops with exit 0 on Ctrl-C",
    async (runner) => {
      const port = await freePort();
      const stateDir = `.tmp/e2e-cli-dev-${runner}-${process.pid}`;
      const dev = await startDev([
        "--port",
        String(port),
        "--state-dir",
        stateDir,
        "--runner",
        runner,
      ]);
      const { info, stop } = dev;
      expect(info.runner).toBe(runner);
      expect(info.worker_url).toBe(`http://127.0.0.1:${port}`);
      expect((await within("GET /health", dev, fetch(`${info.worker_url}/health`))).status).toBe(
        200,
      );
      expect(info.dashboard_url).toBe(`${info.worker_url}/`);
      expect(
        await within(
          "GET the dashboard",
          dev,
          fetch(info.dashboard_url).then((r) => r.text()),
        ),
      ).toContain("<h1>Overview</h1>");
      expect(
        (
          await within(
            "GET the model server's /health",
            dev,
            fetch(`${info.model_server_url}/health`),
          )
        ).status,
      ).toBe(200);
      expect(await stop()).toBe(0);
      await expect(fetch(`${info.worker_url}/health`)).rejects.toThrow();
      rmSync(resolve(root, stateDir), { recursive: true, force: true });
    },
    120_000,
  );

  it("stops the stack itself on Ctrl-C (the runtime libraries' own exit-at-once handlers are not left in the way)", async () => {
    // Human mode, so dev's notes show: "stopping …" is printed only by dev's own handler, which
    // wrangler's SIGINT handler (process.exit()) used to pre-empt.
    const stateDir = `.tmp/e2e-cli-dev-human-${process.pid}`;
    const child = spawn(
      process.execPath,
      [
        join(root, "bin/edge-rollout.mjs"),
        "dev",
        "--simulator-port",
        "0",
        "--port",
        String(await freePort()),
        "--state-dir",
        stateDir,
      ],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once("exit", done));
    const stack = { stderr: () => stderr };
    await within(
      "starting",
      stack,
      new Promise<void>((done, fail) => {
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes("Ctrl-C stops the stack.")) done();
        });
        child.once("close", (code) =>
          fail(new Error(`dev exited ${code} before it was up; stderr:\n${stderr}`)),
        );
      }),
    ).catch((error: unknown) => {
      child.kill("SIGKILL");
      throw error;
    });
    // The stack's workerd, and the supervised sandbox host's (scripts/sandbox-host.ts): all must end with dev.
    const workerds = childrenNamed(child.pid!, "workerd");
    expect(workerds.length).toBeGreaterThanOrEqual(1);
    child.kill("SIGINT");
    expect(await within("stopping on Ctrl-C", stack, exited)).toBe(0);
    expect(stderr).toContain("stopping … (Ctrl-C again to exit at once)");
    await within("dev's workerd ending with it", stack, allGone(workerds));
    rmSync(resolve(root, stateDir), { recursive: true, force: true });
  }, 120_000);

  it("reloads the Worker when a source it imports changes (runner miniflare), keeping local state", async () => {
    const dir = `.tmp/e2e-cli-dev-watch-${process.pid}`;
    mkdirSync(resolve(root, dir), { recursive: true });
    const agentFile = resolve(root, dir, "agent.ts");
    const agent = (name: string) =>
      `import { rollout } from "../../src/sdk";\nrollout(async () => undefined, { name: ${JSON.stringify(name)} });\n`;
    writeFileSync(agentFile, agent("watch-before"));
    writeFileSync(
      resolve(root, dir, "worker.ts"),
      `import "./agent";\nexport * from "../../functions/worker";\nexport { default } from "../../functions/worker";\n`,
    );
    const { info, stop } = await startDev([
      "--port",
      String(await freePort()),
      "--state-dir",
      `${dir}/state`,
      "--worker",
      `${dir}/worker.ts`,
    ]);
    const agents = async () =>
      ((await (await fetch(`${info.worker_url}/v1/agents`)).json()) as { agents: string[] }).agents;
    expect(await agents()).toContain("watch-before");
    const rolloutId = `watched-${process.pid}`;
    const created = await fetch(`${info.worker_url}/v1/rollouts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agent: "external", rollout_id: rolloutId, task: { problem: "p" } }),
    });
    expect(created.status).toBe(202);

    writeFileSync(agentFile, agent("watch-after"));
    let now: string[] = [];
    for (let tries = 0; tries < 120 && !now.includes("watch-after"); tries += 1) {
      await new Promise((r) => setTimeout(r, 500));
      now = await agents().catch(() => []); // a request can meet the runtime mid-restart
    }
    expect(now).toContain("watch-after");
    expect(now).not.toContain("watch-before");
    expect((await fetch(`${info.worker_url}/v1/rollouts/${rolloutId}`)).status).toBe(200);
    expect(await stop()).toBe(0);
    rmSync(resolve(root, dir), { recursive: true, force: true });
  }, 180_000);

  it("exits 1 with the reason when workerd dies under the miniflare runner, instead of serving nothing", async () => {
    const stateDir = `.tmp/e2e-cli-dev-crash-${process.pid}`;
    const dev = await startDev(["--port", String(await freePort()), "--state-dir", stateDir]);
    // Every workerd under dev (the stack's, and the sandbox host's pool): the stack's is among them.
    const workerds = childrenNamed(dev.info.pid, "workerd");
    expect(workerds.length).toBeGreaterThanOrEqual(1);
    for (const { pid } of workerds) process.kill(pid, "SIGKILL");
    expect(await within("exiting after workerd died", dev, dev.exited)).toBe(1);
    const error = JSON.parse(dev.stdout().trim().split("\n").at(-1)!) as {
      ok: boolean;
      error: { message: string; exit_code: number };
    };
    expect(error).toMatchObject({ ok: false, error: { exit_code: 1 } });
    expect(error.error.message).toMatch(
      /^the local stack stopped serving: workerd exited on its own/,
    );
    rmSync(resolve(root, stateDir), { recursive: true, force: true });
  }, 120_000);

  it("keeps local state across restarts of the same --state-dir, and --reset starts it empty", async () => {
    const stateDir = `.tmp/e2e-cli-dev-reset-${process.pid}`;
    const args = async () => ["--port", String(await freePort()), "--state-dir", stateDir];
    const rolloutId = `kept-${process.pid}`;
    const first = await startDev(await args());
    const created = await fetch(`${first.info.worker_url}/v1/rollouts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agent: "external", rollout_id: rolloutId, task: { problem: "p" } }),
    });
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
