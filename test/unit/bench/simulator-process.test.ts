import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const root = resolve(import.meta.dirname, "../../..");

/** Whether a process with this pid is still running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the benches' simulator process (unit)", () => {
  it("is stopped when the bench that started it fails before stopping it", async () => {
    // A bench that starts the simulator, prints its pid and then dies of an error, as one whose stack would not start.
    const dir = mkdtempSync(join(tmpdir(), "sim-exit-"));
    const bench = join(dir, "failing-bench.mts");
    writeFileSync(
      bench,
      `import { startSimulatorProcess } from ${JSON.stringify(join(root, "bench/kit/simulator-process.ts"))};
       const simulator = await startSimulatorProcess(["--seed", "1"]);
       console.log("pid", simulator.child.pid);
       throw new Error("the stack would not start");`,
    );
    const run = promisify(execFile)(process.execPath, [require.resolve("tsx/cli"), bench], {
      cwd: root,
      timeout: 60_000,
    });
    const failed = await run.then(
      () => null,
      (error: { stdout: string }) => error,
    );
    const pid = Number(/pid (\d+)/.exec(failed?.stdout ?? "")?.[1]);
    expect(pid).toBeGreaterThan(0);
    // SIGTERM reaches the simulator's tsx wrapper, which stops its node child before exiting.
    const deadline = Date.now() + 10_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  }, 70_000);
});
