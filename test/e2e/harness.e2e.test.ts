/**
 * Integration (the real local stack and the real pinned CLIs): `npm run bench:harness`, short.
 * Claude Code, Codex and opencode each run tasks as rollouts in their own workspaces; every
 * rollout ends terminal, the reward is the check's, every call the harness logged is recorded, and
 * each rollout's calls merge into one sample (drift splits 0), pulled as Arrow.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const require = createRequire(import.meta.url);

/** Runs `npm run bench:harness` with `args` and answers its output, once it exited 0. */
function benchHarness(args: string[], timeoutMs: number): string {
  const run = spawnSync(
    process.execPath,
    [require.resolve("tsx/cli"), "bench/harness/harness.bench.ts", ...args],
    { cwd: ROOT, encoding: "utf8", timeout: timeoutMs },
  );
  expect(run.status, `${run.stdout}\n${run.stderr.slice(-3000)}`).toBe(0);
  return run.stdout;
}

describe("agent harnesses as rollouts (bench:harness, 2 tasks × n=2 per harness)", () => {
  it("runs Claude Code, Codex and opencode to terminal rollouts, token-exact, every logged call recorded", () => {
    const out = benchHarness(["--tasks", "2", "--n", "2", "--runners", "4"], 280_000);
    for (const harness of ["claude-code", "codex", "opencode"]) {
      const line = new RegExp(
        `^harness ${harness}: rollouts (\\d+), reward mean ([\\d.]+), drift splits (-?\\d+), calls recorded (\\d+) / logged (\\d+), rollouts/s`,
        "m",
      ).exec(out);
      expect(line, `${harness}\n${out}`).not.toBeNull();
      const [, rollouts, , drift, recorded, logged] = line!;
      expect(Number(rollouts), harness).toBe(4);
      expect(Number(drift), harness).toBe(0);
      // A solved task takes two loop calls (the shell call, then the answer).
      expect(Number(recorded), harness).toBe(8);
      expect(Number(recorded), harness).toBe(Number(logged));
      expect(out).toMatch(
        new RegExp(
          `^  ${harness}: terminal 4/4, .*token-exact continuations 4, groups pulled as Arrow 2 \\(4 samples\\)`,
          "m",
        ),
      );
    }
  }, 300_000);
});

/** Writes a Harbor-layout task: instruction, task.toml with the agent's wall clock, the oracle, the check. */
function writeTask(
  root: string,
  id: string,
  task: { instruction: string; wallClockS: number; solve: string; check: string },
): void {
  const dir = join(root, id);
  for (const sub of ["environment/workspace", "solution", "tests"])
    mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, "instruction.md"), `${task.instruction}\n`);
  writeFileSync(
    join(dir, "task.toml"),
    `version = "1.0"\n\n[verifier]\ntimeout_sec = 30.0\n\n[agent]\ntimeout_sec = ${task.wallClockS}\n`,
  );
  writeFileSync(join(dir, "environment/workspace/README"), "workspace\n");
  writeFileSync(join(dir, "solution/solve.sh"), `#!/usr/bin/env bash\n${task.solve}\n`);
  writeFileSync(join(dir, "tests/test.sh"), `#!/usr/bin/env bash\n${task.check}\n`);
}

describe("a harness's workspace (opencode, the real CLI)", () => {
  it("cannot reach an address outside the gateway, and a harness that hangs ends TIMEOUT at its wall clock", async () => {
    // A server on the host's loopback stands in for the outside: reachable from here, not from the namespace.
    let reached = 0;
    const outside = createServer((_, res) => {
      reached += 1;
      res.end("outside");
    });
    await new Promise<void>((done) => outside.listen(0, "127.0.0.1", done));
    const port = (outside.address() as AddressInfo).port;
    const root = mkdtempSync(join(tmpdir(), "harness-safety-"));
    try {
      writeTask(root, "reach-outside", {
        instruction: `Fetch http://127.0.0.1:${port}/ and write what it answers to page.txt.`,
        wallClockS: 60,
        solve: `python3 -c "import urllib.request; page = urllib.request.urlopen('http://127.0.0.1:${port}/', timeout=3).read(); open('page.txt', 'wb').write(page)" || echo blocked > blocked.txt`,
        check: "[ -f blocked.txt ] && [ ! -f page.txt ]",
      });
      writeTask(root, "hang", {
        instruction: "Wait for the build to finish.",
        wallClockS: 4,
        solve: "sleep 120",
        check: "exit 1",
      });
      const out = benchHarness(
        [
          ...["--harnesses", "opencode", "--tasks-dir", root, "--task-ids", "reach-outside,hang"],
          ...["--n", "1", "--success-rate", "1"],
        ],
        150_000,
      );
      expect(out).toMatch(/^harness opencode: rollouts 2, reward mean 0\.500,/m);
      expect(out).toMatch(/^  opencode: terminal 2\/2, terminations \{"ENV_DONE":1,"TIMEOUT":1\}/m);
      expect(reached).toBe(0);
    } finally {
      outside.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 180_000);
});
