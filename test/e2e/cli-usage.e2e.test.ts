import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "../../tools/simulator/free-port";

const root = resolve(import.meta.dirname, "../..");
const bin = join(root, "bin/edge-rollout.mjs");

function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: root, env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        done({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("the edge-rollout bin without a server (end to end)", () => {
  it("prints help with the exit codes and exits 0", async () => {
    const run = await cli(["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Usage: edge-rollout");
    expect(run.stdout).toMatch(/3 +the server is unreachable/);
  });

  it("exits 2 for a usage error, with the reason on stderr, or as JSON with --json", async () => {
    const run = await cli(["submit", "test/fixtures/datasets/calculator.parquet", "--n", "4"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("required option '--agent <name>' not specified");
    const json = await cli(["drain", "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      error: { kind: "UsageError", exit_code: 2 },
    });
  });

  it("exits 3 when the server is unreachable, for --url and for EDGE_ROLLOUT_URL", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await cli([
      "submit",
      "test/fixtures/datasets/calculator.jsonl",
      "--agent",
      "calculator",
      "--n",
      "2",
      "--url",
      url,
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`cannot reach ${url}`);
    const viaEnv = await cli(["status", "--json"], { EDGE_ROLLOUT_URL: url });
    expect(viaEnv.code).toBe(3);
    expect(JSON.parse(viaEnv.stdout)).toMatchObject({
      ok: false,
      error: { kind: "UnreachableError", exit_code: 3 },
    });
    const doctor = await cli(["doctor", "--url", url]);
    expect(doctor.code).toBe(3);
    expect(doctor.stdout).toContain("[FAIL] stack:");
  });
});
