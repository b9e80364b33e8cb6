import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MiniflareStack, startMiniflareStack } from "../../scripts/miniflare-stack";
import { validateAtif } from "../../src/sink/formats/atif-schema";
import { freePort } from "../../tools/simulator/free-port";

const root = resolve(import.meta.dirname, "../..");
const bin = join(root, "bin/edge-rollout.mjs");
const parquet = "test/fixtures/datasets/calculator.parquet";
const jsonl = "test/fixtures/datasets/calculator.jsonl";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bin as a user would (no TTY); `onStderr` may signal the child while it runs. */
function cli(
  args: string[],
  env: Record<string, string>,
  onStderr?: (text: string, child: ReturnType<typeof spawn>) => void,
): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      onStderr?.(stderr, child);
    });
    child.once("error", reject);
    child.once("close", (code) => resolvePromise({ code, stdout, stderr }));
  });
}

describe("the edge-rollout CLI against the local stack (end to end)", () => {
  let stack: MiniflareStack;
  let env: Record<string, string>;
  const trainBatches: Array<{ id: string; rows: number; n: number }> = [];
  const dir = mkdtempSync(join(tmpdir(), "cli-e2e-"));
  const stateDir = `.tmp/e2e-cli-${process.pid}`;

  beforeAll(async () => {
    // On Miniflare's API (no wrangler dev proxy; cli-dev, caller-gone and the soak keep wrangler dev
    // tested). Its one failure there (3 groups left pending at load 8) predates the queue-broker patch.
    stack = await startMiniflareStack({
      workerPort: await freePort(),
      simulator: { port: 0, seed: 7 },
      stateDir,
    });
    env = { EDGE_ROLLOUT_URL: stack.workerUrl };
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    for (const path of [dir, resolve(root, stateDir)])
      rmSync(path, { recursive: true, force: true });
  });

  it("submits the parquet dataset, prints progress lines without a TTY and a final summary, and exits 0", async () => {
    const id = `cli-parquet-${Date.now()}`;
    const run = await cli(
      [
        "submit",
        parquet,
        "--agent",
        "calculator",
        "--n",
        "4",
        "--batch-id",
        id,
        "--interval",
        "200",
      ],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`started batch ${id}: 64 rollouts (16 rows × n=4)`);
    expect(run.stderr).toMatch(
      /^\[(?:\d+m)?[\d.]+m?s\] \d+\/64 done \(\d+%\) ok \d+ failed \d+ running \d+ queued \d+ \| reward .* rollouts\/s \| ETA /m,
    );
    expect(run.stderr).toMatch(/64\/64 done \(100%\)/);
    expect(run.stdout).toContain(`batch ${id}: completed`);
    expect(run.stdout).toMatch(
      /finished 64\/64 in (?:\d+m)?[\d.]+m?s \([\d.]+ rollouts\/s\): succeeded \d+, failed \d+, cancelled 0/,
    );
    expect(run.stdout).toMatch(/reward mean 0\.\d{3} over \d+ rollouts/);
    trainBatches.push({ id, rows: 16, n: 4 });
  }, 120_000);

  it("submits the JSONL dataset with --json and --limit, and re-submitting the same batch id follows it instead of duplicating it", async () => {
    const id = `cli-jsonl-${Date.now()}`;
    const args = [
      "submit",
      jsonl,
      "--agent",
      "calculator",
      "--n",
      "2",
      "--limit",
      "6",
      "--batch-id",
      id,
      "--interval",
      "200",
      "--json",
    ];
    const run = await cli(args, env);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stderr).toBe("");
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      ok: true,
      status: "completed",
      batch_ids: [id],
      rows: 6,
      n: 2,
      rollouts: 12,
      finished: 12,
      cancelled: 0,
    });
    trainBatches.push({ id, rows: 6, n: 2 });
    const again = await cli(args.slice(0, -1), env);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`already submitted, following batch ${id}`);
  }, 120_000);

  it("splits a dataset over --chunk-rows into batches run one after another, keeping each row's task id", async () => {
    const id = `cli-chunks-${Date.now()}`;
    const run = await cli(
      [
        "submit",
        jsonl,
        "--agent",
        "math",
        "--n",
        "2",
        "--chunk-rows",
        "6",
        "--batch-id",
        id,
        "--interval",
        "200",
        "--json",
      ],
      env,
    );
    expect(run.code, run.stdout).toBe(0);
    const ids = [0, 1, 2].map((k) => `${id}.chunk${k}`);
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: true,
      status: "completed",
      batch_ids: ids,
      rows: 16,
      rollouts: 32,
      finished: 32,
    });
    trainBatches.push(
      { id: ids[0]!, rows: 6, n: 2 },
      { id: ids[1]!, rows: 6, n: 2 },
      { id: ids[2]!, rows: 4, n: 2 },
    );
    const view = (await (await fetch(`${stack.workerUrl}/v1/rollouts/${ids[1]}:0:0`)).json()) as {
      trajectory: { task: { task_id: string } };
    };
    expect(view.trajectory.task.task_id).toBe("6");
  }, 120_000);

  it("shows a finished rollout's turns, tool calls, tokens, reward and mask, and exports it as valid ATIF and as JSON", async () => {
    const rollout = `${trainBatches[0]!.id}:1:0`;
    const shown = await cli(["show", rollout], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/status: +(succeeded|failed) · [A-Z_]+/);
    expect(shown.stdout).toContain("── call 1 · step 0 · prompt");
    expect(shown.stdout).toContain("→ tool call calculate(");
    expect(shown.stdout).toMatch(
      /sample 0 \(uid .*:1, sample_index 0\): prompt \d+ tokens \(context, not trained\), response \d+ tokens: \d+ trained \(mask 1\), \d+ context \(mask 0\)/,
    );
    const json = JSON.parse((await cli(["show", rollout, "--json"], env)).stdout) as {
      samples: Array<{ response_ids: number[]; response_mask: number[] }>;
    };
    expect(json.samples.length).toBeGreaterThan(0);
    for (const sample of json.samples)
      expect(sample.response_mask).toHaveLength(sample.response_ids.length);

    const atif = await cli(["export", rollout, "--format", "atif"], env);
    expect(atif.code).toBe(0);
    expect(validateAtif(JSON.parse(atif.stdout))).toEqual([]);
    const file = join(dir, "view.json");
    const written = await cli(
      ["export", rollout, "--format", "json", "--out", file, "--json"],
      env,
    );
    expect(JSON.parse(written.stdout)).toMatchObject({ ok: true, format: "json", path: file });
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ rollout_id: rollout });
  }, 60_000);

  it("drains every sample of the submitted batches exactly once, acks them, and leaves the feed empty", async () => {
    const out = join(dir, "samples.jsonl");
    const run = await cli(["drain", "--out", out, "--per-pull", "5", "--json"], env);
    expect(run.code, run.stdout).toBe(0);
    const summary = JSON.parse(run.stdout) as {
      ok: boolean;
      groups: number;
      samples_pulled: number;
      samples_written: number;
      stopped: string;
      feed: Record<string, number>;
    };
    const lines = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map(
        (line) => JSON.parse(line) as { rollout_id: string; segment_index: number; uid: string },
      );
    expect(summary).toMatchObject({
      ok: true,
      stopped: "empty",
      groups: 16 + 6 + 16,
      feed: { ready_groups: 0, pending_groups: 0, leased_groups: 0 },
    });
    expect(lines).toHaveLength(summary.samples_pulled);
    expect(summary.samples_written).toBe(summary.samples_pulled);
    expect(new Set(lines.map((s) => `${s.rollout_id}#${s.segment_index}`)).size).toBe(lines.length);
    const expected = trainBatches.flatMap((b) =>
      Array.from({ length: b.rows * b.n }, (_, i) => `${b.id}:${Math.floor(i / b.n)}:${i % b.n}`),
    );
    expect(new Set(lines.map((s) => s.rollout_id))).toEqual(new Set(expected));

    const again = await cli(["drain", "--out", out, "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({
      ok: true,
      groups: 0,
      samples_written: 0,
      samples_in_file: lines.length,
    });
    expect(readFileSync(out, "utf8").trim().split("\n")).toHaveLength(lines.length);
  }, 60_000);

  it("drain --follow keeps waiting on an empty feed, writes a batch submitted meanwhile, and stops on Ctrl-C with exit 130", async () => {
    const out = join(dir, "followed.jsonl");
    const id = `cli-follow-${Date.now()}`;
    let child: ReturnType<typeof spawn> | undefined;
    // The feed is empty when it starts (the test above drained it); it must neither exit nor stop.
    const drain = cli(
      ["drain", "--follow", "--out", out, "--interval", "200"],
      env,
      (_text, running) => void (child = running),
    );
    const lines = () =>
      existsSync(out) ? readFileSync(out, "utf8").trim().split("\n").filter(Boolean) : [];
    await new Promise((r) => setTimeout(r, 3_000));
    expect(lines()).toHaveLength(0);
    const submit = await cli(
      [
        "submit",
        jsonl,
        "--agent",
        "calculator",
        "--n",
        "2",
        "--limit",
        "3",
        "--batch-id",
        id,
        "--json",
      ],
      env,
    );
    expect(submit.code, submit.stderr).toBe(0);
    const deadline = Date.now() + 30_000;
    while ((lines().length < 6 || !child) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(child, "drain printed nothing while following").toBeDefined();
    child!.kill("SIGINT");
    const run = await drain;
    expect(run.code, run.stderr).toBe(130);
    expect(run.stdout).toMatch(/interrupted/);
    const written = lines().map((line) => JSON.parse(line) as { rollout_id: string });
    expect(new Set(written.map((sample) => sample.rollout_id))).toEqual(
      new Set(Array.from({ length: 6 }, (_, i) => `${id}:${Math.floor(i / 2)}:${i % 2}`)),
    );
    trainBatches.push({ id, rows: 3, n: 2 });
  }, 90_000);

  it("reports a batch's status and the feed and policy as JSON, and a missing rollout as exit 1", async () => {
    const batch = JSON.parse(
      (await cli(["status", trainBatches[0]!.id, "--json"], env)).stdout,
    ) as Record<string, unknown>;
    expect(batch).toMatchObject({
      batch_id: trainBatches[0]!.id,
      status: "completed",
      done: true,
      rollouts: 64,
    });
    const overview = JSON.parse((await cli(["status", "--json"], env)).stdout) as {
      feed: Record<string, unknown>;
      policy: Record<string, unknown>;
    };
    expect(overview.feed).toMatchObject({ ready_groups: 0, pending_groups: 0 });
    expect(overview.policy).toMatchObject({ policy_version: 0 });
    const missing = await cli(["show", "no-such-rollout"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("(404)");
  }, 30_000);

  it("doctor passes against the stack and the simulator, with token ids", async () => {
    const run = await cli(["doctor", "--model-url", stack.modelServerUrl, "--json"], env);
    expect(run.code, run.stdout).toBe(0);
    const report = JSON.parse(run.stdout) as {
      ok: boolean;
      checks: Array<{ name: string; status: string; detail: string }>;
    };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.status)).not.toContain("fail");
    expect(
      report.checks.some(
        (c) => c.name.startsWith("model server") && /returns token ids/.test(c.detail),
      ),
    ).toBe(true);
  }, 30_000);

  it("cancels the batch on Ctrl-C with --on-interrupt cancel and exits 130", async () => {
    const id = `cli-interrupt-${Date.now()}`;
    let sent = false;
    const run = await cli(
      [
        "submit",
        jsonl,
        "--agent",
        "calculator",
        "--n",
        "8",
        "--mode",
        "val",
        "--max-concurrent",
        "1",
        "--batch-id",
        id,
        "--on-interrupt",
        "cancel",
        "--interval",
        "200",
      ],
      env,
      (text, child) => {
        if (!sent && /\] [1-9]\d*\/128 done/.test(text)) {
          sent = true;
          child.kill("SIGINT");
        }
      },
    );
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain(`cancelled batch ${id}`);
    expect(run.stdout).toContain(`batch ${id}: cancelled`);
    const status = JSON.parse((await cli(["status", id, "--json"], env)).stdout) as {
      status: string;
      counts: { cancelled: number };
    };
    expect(["cancelling", "cancelled"]).toContain(status.status);
    expect(status.counts.cancelled).toBeGreaterThan(0);
  }, 60_000);

  it("drain --batch names the batch's groups the feed dropped as stale instead of delivering them", async () => {
    const id = `cli-stale-${Date.now()}`;
    const submitted = await cli(
      [
        "submit",
        jsonl,
        "--agent",
        "calculator",
        "--n",
        "2",
        "--limit",
        "2",
        "--batch-id",
        id,
        "--training-mode",
        "verl/hybrid",
        "--interval",
        "200",
        "--json",
      ],
      env,
    );
    expect(submitted.code, submitted.stderr).toBe(0);
    // A weight sync after the rollouts: verl/hybrid allows no version behind, so both groups are stale.
    const post = (path: string, body: unknown) =>
      fetch(`${stack.workerUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const { policy_version } = (await (await post("/v1/policy/sync/begin", {})).json()) as {
      policy_version: number;
    };
    expect((await post("/v1/policy/sync/end", { policy_version: policy_version + 1 })).status).toBe(
      200,
    );

    const out = join(dir, "stale.jsonl");
    const run = await cli(["drain", "--out", out, "--batch", id, "--json"], env);
    expect(run.code, run.stdout).toBe(0);
    const summary = JSON.parse(run.stdout) as {
      groups: number;
      samples_written: number;
      dropped_groups: Array<{ uid: string; reason: string; policy_version: number }>;
    };
    expect(summary).toMatchObject({ groups: 0, samples_written: 0 });
    expect(summary.dropped_groups.map((g) => [g.uid, g.reason, g.policy_version]).sort()).toEqual([
      [`${id}:0`, "stale", policy_version + 1],
      [`${id}:1`, "stale", policy_version + 1],
    ]);
    const human = await cli(["drain", "--out", out, "--batch", id], env);
    expect(human.stdout).toContain(
      `2 groups of these batches were dropped by the feed, never delivered (stale: e.g. ${id}:0 was sampled at policy version ${policy_version}, verl/hybrid allows 0 behind version ${policy_version + 1})`,
    );
  }, 60_000);
});
