/**
 * @module One harness batch on the local stack, read back: submitted as `external:<harness>`
 * rollouts, run by the Python harness runner (the real CLI per rollout), and measured from what
 * the Worker recorded (calls, rewards, termination reasons), what each harness logged of its own
 * calls (the runner's `harness_run` span), and the groups the trainer pulls as Arrow.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { resolve } from "node:path";

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, "../..");
/** The shipped tasks. */
export const TASKS = resolve(ROOT, "examples/harness-tasks");
const PYTHON_ROOT = resolve(ROOT, "clients/python");

/**
 * Dataset rows (verl's RL format, `task_dir` naming the task) for the tasks in `dir`: the ones
 * named, else the first `count` in name order.
 */
export function taskRows(
  dir: string,
  count: number,
  ids?: string[],
): Array<Record<string, unknown>> {
  const all = readdirSync(dir, { withFileTypes: true })
    .filter(
      (entry) => entry.isDirectory() && existsSync(resolve(dir, entry.name, "instruction.md")),
    )
    .map((entry) => entry.name)
    .sort();
  const chosen = ids ?? all.slice(0, count);
  return chosen.map((id, index) => ({
    prompt: readFileSync(resolve(dir, id, "instruction.md"), "utf8").trim(),
    data_source: "harness-tasks",
    ability: "coding",
    reward_model: { style: "rule", ground_truth: null },
    extra_info: { index, task: id },
    task_dir: id,
  }));
}

async function call<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, {
    ...init,
    headers: { "content-type": "application/json", ...(init?.headers ?? {}) },
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Submits one batch of `rows` × `n` for `harness`; answers its id. */
export async function submitBatch(
  workerUrl: string,
  harness: string,
  rows: unknown[],
  n: number,
  batchId: string,
): Promise<string> {
  await call(`${workerUrl}/v1/batches`, {
    method: "POST",
    body: JSON.stringify({
      batch_id: batchId,
      agent: `external:${harness}`,
      n,
      rows,
      config: { max_steps: 50 },
    }),
  });
  return batchId;
}

/** Runs the harness runner until it has been idle for `idleS`; answers its wall time and CPU seconds. */
export async function runRunner(
  workerUrl: string,
  tasksDir: string,
  harnesses: string[],
  runners: number,
  idleS: number,
): Promise<{ wallS: number; cpuS: number; stderr: string }> {
  const started = performance.now();
  const args = [
    ...["-m", "edge_rollout.harness", "--url", workerUrl, "--tasks", tasksDir],
    ...harnesses.flatMap((h) => ["--agent", h]),
    ...["--runners", String(runners), "--exit-when-idle", String(idleS)],
  ];
  const child = spawn("python3", ["-c", RUSAGE_WRAPPER, ...args], {
    cwd: PYTHON_ROOT,
    stdio: ["ignore", "inherit", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once("exit", done));
  if (code !== 0) throw new Error(`the harness runner exited with ${code}: ${stderr.slice(-3000)}`);
  const cpu = /runner cpu s: (\S+)/.exec(stderr);
  return { wallS: (performance.now() - started) / 1000, cpuS: Number(cpu?.[1] ?? NaN), stderr };
}

/**
 * Runs `python -m <args>` in a child and prints the CPU it and every process it waited for used
 * (the runner and the harness CLIs it ran: getrusage's RUSAGE_CHILDREN).
 */
const RUSAGE_WRAPPER = `
import resource, subprocess, sys
code = subprocess.call([sys.executable, *sys.argv[1:]])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"runner cpu s: {usage.ru_utime + usage.ru_stime:.3f}", file=sys.stderr)
sys.exit(code)
`;

/** What a batch's rollouts recorded. */
export interface BatchReadout {
  rollouts: number;
  terminal: number;
  rewardMean: number;
  callsRecorded: number;
  callsLogged: number;
  sideCalls: number;
  tokenExactCalls: number;
  terminations: Record<string, number>;
}

interface RolloutPage {
  rollouts: Array<{ rollout_id: string }>;
  next_cursor?: string | null;
}

interface RolloutViewLite {
  status: string;
  reward: number | null;
  termination_reason: string | null;
  llm_calls: Array<{ purpose?: string; continuation?: { token_exact: boolean } }>;
  spans: Array<{
    kind: string;
    name: string;
    attributes?: Record<string, unknown>;
    value?: unknown;
  }>;
}

/** Reads every rollout of `batchId`. */
export async function readBatch(workerUrl: string, batchId: string): Promise<BatchReadout> {
  const ids: string[] = [];
  let cursor: string | null | undefined;
  do {
    const page = await call<RolloutPage>(
      `${workerUrl}/v1/batches/${batchId}/rollouts?limit=200${cursor ? `&cursor=${cursor}` : ""}`,
    );
    ids.push(...page.rollouts.map((r) => r.rollout_id));
    cursor = page.next_cursor;
  } while (cursor);
  const out: BatchReadout = {
    rollouts: ids.length,
    terminal: 0,
    rewardMean: 0,
    callsRecorded: 0,
    callsLogged: 0,
    sideCalls: 0,
    tokenExactCalls: 0,
    terminations: {},
  };
  let rewards = 0;
  for (const id of ids) {
    const view = await call<RolloutViewLite>(`${workerUrl}/v1/rollouts/${id}`);
    if (["succeeded", "failed", "cancelled"].includes(view.status)) out.terminal++;
    rewards += view.reward ?? 0;
    const reason = view.termination_reason ?? "none";
    out.terminations[reason] = (out.terminations[reason] ?? 0) + 1;
    // The harness's loop calls; its side calls (opencode's title) are counted apart: not every harness logs them.
    out.callsRecorded += view.llm_calls.filter((c) => c.purpose !== "side").length;
    out.sideCalls += view.llm_calls.filter((c) => c.purpose === "side").length;
    out.tokenExactCalls += view.llm_calls.filter((c) => c.continuation?.token_exact).length;
    const run = view.spans.find((s) => s.name === "harness_run");
    const value = (run?.value ?? {}) as Record<string, unknown>;
    out.callsLogged += Number(value.logged_calls ?? 0);
  }
  out.rewardMean = ids.length ? rewards / ids.length : 0;
  return out;
}

/** Pulls (and acks) every group of `batchIds` as Arrow with the Python client; answers groups, samples and drift splits. */
export function pullGroups(
  workerUrl: string,
  batchIds: string[],
): { groups: number; samples: number; arrow: boolean; members: number } {
  const script = `
import json, sys
from edge_rollout.client import Client
client = Client(sys.argv[1])
groups = samples = members = 0
arrow = True
while True:
    got = client.pull(max_groups=64, batch_id=sys.argv[2].split(","), format="arrow")
    if not got["groups"]:
        break
    for group in got["groups"]:
        groups += 1
        for member in group["members"] if "members" in group else group.get("rollouts", []):
            members += 1
            samples += len(member["samples"])
    client.ack(got["lease_id"])
print(json.dumps({"groups": groups, "samples": samples, "members": members, "arrow": arrow}))
`;
  const run = spawnSync("python3", ["-c", script, workerUrl, batchIds.join(",")], {
    cwd: PYTHON_ROOT,
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`pulling groups: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").at(-1)!);
}
