import { execFile, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { freePort } from "../../tools/simulator/free-port";
import { allGone, childrenNamed, type ProcessRef } from "../fixtures/processes";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const tsx = createRequire(import.meta.url).resolve("tsx/cli");

describe("npm start --once (end to end, Miniflare's API + simulator)", () => {
  it("runs the demo set of the four agents with Qwen3's tokenizer, prints the summary with non-zero mean rewards and exits 0", async () => {
    const port = await freePort();
    const { stdout } = await run(
      process.execPath,
      [tsx, "scripts/start.ts", "--once", "--port", String(port), "--simulator-port", "0"],
      {
        cwd: root,
        timeout: 120_000,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      },
    );
    const rows = Object.fromEntries(
      stdout
        .split("\n")
        .filter((line) => /^(math|calculator|js-coder|dialogue)\s/.test(line))
        .map((line) => {
          const [
            agent,
            rollouts,
            ok,
            meanReward,
            meanSteps,
            ,
            completionTokens,
            samples,
            driftSplits,
            trainedTokens,
          ] = line.split(/\s+/);
          const counts = {
            completionTokens: Number(completionTokens),
            samples: Number(samples),
            driftSplits: Number(driftSplits),
            trainedTokens: Number(trainedTokens),
          };
          return [
            agent,
            {
              rollouts: Number(rollouts),
              ok: Number(ok),
              meanReward: Number(meanReward),
              meanSteps: Number(meanSteps),
              ...counts,
            },
          ];
        }),
    );
    expect(stdout).toContain("tokenizer qwen3");
    expect(rows.math).toMatchObject({ rollouts: 8, ok: 8, meanSteps: 1 });
    expect(rows.calculator).toMatchObject({ rollouts: 8, ok: 8, meanSteps: 2 });
    expect(rows.math.meanReward).toBeGreaterThan(0);
    expect(rows.calculator.meanReward).toBeGreaterThan(0);
    // js-coder's snippets ran in the supervised sandbox host; its reward is a share of passing tests.
    expect(rows["js-coder"]).toMatchObject({ rollouts: 8, ok: 8 });
    expect(rows["js-coder"].meanReward).toBeGreaterThan(0);
    expect(rows["js-coder"].meanReward).toBeLessThanOrEqual(1);
    // Multi-turn reasoning: each prompt lost the previous reply's <think> (Qwen3's template), so every
    // call after the first starts a new sample; the calculator's tool turn keeps its reasoning
    // (it follows the last user query), so its two calls stay one sample.
    expect(rows.dialogue).toMatchObject({
      rollouts: 2,
      ok: 2,
      meanSteps: 3,
      samples: 6,
      driftSplits: 4,
    });
    expect(rows.calculator).toMatchObject({ samples: 8, driftSplits: 0 });
    // Every model token trains once (mask 1) and no template or tool token does, in every sample.
    for (const agent of ["math", "calculator", "dialogue"])
      expect(rows[agent].trainedTokens, agent).toBe(rows[agent].completionTokens);
    expect(stdout).toMatch(/26 rollouts in [\d.]+ s wall time/);
    // --once has stopped the stack by now: no hint that points at it.
    expect(stdout).not.toContain("Inspect one");
    expect(stdout).not.toContain("Serving at");
  }, 150_000);

  it("stops what it started when a SIGINT comes during start-up, as soon as the stack is up, and exits 0", async () => {
    // One process, signalled alone, as a supervisor or a script stops it (a terminal's Ctrl-C
    // reaches the whole process group, which ended the runtime too): before, nothing listened
    // during start-up, so the signal killed it and left its workerd running.
    const stateDir = `.tmp/e2e-start-signal-${process.pid}`;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "scripts/start.ts", "--port", String(await freePort())].concat([
        "--simulator-port",
        "0",
        "--state-dir",
        stateDir,
        "--reset",
      ]),
      {
        cwd: root,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once("exit", done));
    // Every workerd it ever started, collected until it exits (an orphan's parent is no longer it).
    const workerds = new Map<number, ProcessRef>();
    let running = true;
    void exited.then(() => (running = false));
    const watch = (async () => {
      while (running) {
        for (const ref of childrenNamed(child.pid!, "workerd")) workerds.set(ref.pid, ref);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      // Signalled once its first workerd runs: the stack is being started, not up yet.
      const deadline = Date.now() + 60_000;
      while (workerds.size === 0 && running && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(workerds.size, output).toBeGreaterThan(0);
      expect(output).not.toContain("edge-rollout running at");
      child.kill("SIGINT");
      expect(await exited, output).toBe(0);
      await watch;
      expect(output).toContain("stopping as soon as the stack is up");
      expect(output).not.toContain("rollouts finished");
      const gone = await Promise.race([
        allGone([...workerds.values()]).then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 15_000)),
      ]);
      expect(
        gone,
        `workerd still running after start stopped: ${[...workerds.keys()].join(", ")}`,
      ).toBe(true);
    } finally {
      child.kill("SIGKILL");
      rmSync(`${root}/${stateDir}`, { recursive: true, force: true });
    }
  }, 120_000);
});
