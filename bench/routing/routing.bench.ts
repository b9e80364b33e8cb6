/**
 * @module `npm run bench:routing`: the `vllm` backend's routing policies side by side (`hash` by
 * rollout id, `prefix_hash` on a consistent-hash ring, `least_loaded`, `sticky_least_loaded`),
 * over simulated replicas that model vLLM's prefix cache (docs/vllm.md, "The engine"), fresh
 * replica processes for every run, on two workloads:
 *
 * - `slow-replica`: 4 replicas, the last 2x slower; each group's 3,000-token document is its
 *   system prompt (the workload sticky_least_loaded's constants were tuned on).
 * - `shared-prompt`: 4 equal replicas; a 1,000-token system prompt every group shares, then the
 *   group's 2,000-token document (nothing was tuned on it).
 *
 * Each workload and policy runs `--repeats` times with the policies rotated each repeat, through
 * `--isolates` router instances (in-process-arm.ts); then the same workload once each through the
 * real local Worker's gateway (worker-arm.ts, one isolate), to check the ranking on the real path.
 * Per workload and policy:
 *
 *   <workload> <policy>: calls/s M (a–b), group p90 P s (a–b)
 *
 * M and P are medians over the repeats, (a–b) their range. Prefill defaults to 45 ms per 1k
 * uncached tokens: an 8B model's forward pass is about 2 × 8e9 FLOP per token, an H100 SXM does
 * 989 dense BF16 TFLOP/s (NVIDIA's datasheet), so at the ~40% utilisation vLLM's prefill reaches
 * an 8k-token prompt costs about 0.35 s. The machine is shared: the header prints its load average.
 */
import { availableParallelism, loadavg } from "node:os";
import { commandLine, integerFlag } from "../../scripts/command-line";
import { RoutingPolicyName } from "../../src/schemas/backend-config";
import { VIRTUAL_NODES } from "../../src/gateway/backends/hash-ring";
import { PREFIX_HASH_CHARS } from "../../src/gateway/backends/prefix-key";
import { SLOW_REPLICA_PACE } from "../../src/gateway/backends/routing-policies";
import { inProcessCaller } from "./in-process-arm";
import type { ReplicaSpec } from "./replica-set";
import { withReplicas } from "./replica-set";
import { type PolicyRun, detailLine, headline, policyRun, ranking, ratio } from "./routing-report";
import {
  type RoutingWorkload,
  rolloutLabels,
  runWorkload,
  sharedPromptOf,
} from "./routing-workload";
import { startWorkerStack, workerCaller } from "./worker-arm";

const values = commandLine({
  usage: "npm run bench:routing -- [options]",
  description:
    "hash vs prefix_hash vs least_loaded vs sticky_least_loaded over simulated vLLM replicas with prefix caches, on two workloads, in-process and through the Worker.",
  flags: {
    policies: {
      type: "string",
      default: "hash,prefix_hash,least_loaded,sticky_least_loaded",
      help: "policies to run (rotated by one each repeat)",
    },
    workloads: { type: "string", default: "slow-replica,shared-prompt", help: "workloads to run" },
    repeats: {
      type: "string",
      default: "3",
      help: "in-process runs per workload and policy (0: the Worker arm alone)",
    },
    isolates: { type: "string", default: "4", help: "router instances calls are spread over" },
    rollouts: { type: "string", default: "96", help: "rollouts per in-process run" },
    concurrency: { type: "string", default: "96", help: "rollouts in flight (whole groups)" },
    "worker-rollouts": {
      type: "string",
      default: "96",
      help: "rollouts per Worker run, all in flight (0: no Worker arm)",
    },
    turns: { type: "string", default: "8", help: "calls per rollout" },
    n: { type: "string", default: "8", help: "GRPO group size (members share the prompt)" },
    "slow-factor": {
      type: "string",
      default: "2",
      help: "slow-replica: the last replica's slowdown",
    },
    bound: { type: "string", default: "16", help: "sticky_least_loaded's bound" },
    "document-tokens": { type: "string", default: "3000", help: "tokens of each group's prompt" },
    "shared-prompt-tokens": {
      type: "string",
      default: "1000",
      help: "shared-prompt: of those, the system prompt every group shares",
    },
    "max-tokens": { type: "string", default: "48", help: "tokens per answer" },
    "think-ms": { type: "string", default: "200", help: "environment step between calls" },
    "observation-words": { type: "string", default: "256", help: "words each turn adds" },
    "prefill-ms-per-1k-tokens": { type: "string", default: "45", help: "H100, 8B model" },
    "per-token-ms": { type: "string", default: "10", help: "decode time per token, one request" },
    "decode-slowdown": { type: "string", default: "0.01", help: "per other running request" },
    "block-size": { type: "string", default: "16", help: "tokens per KV block" },
    "cache-blocks": {
      type: "string",
      default: "6144",
      help: "KV blocks per replica (LRU beyond): a quarter of an 8B model's on one H100, as a replica here runs ~32 of the ~128 sequences one batches",
    },
  },
});

const WORKLOADS = ["slow-replica", "shared-prompt"] as const;
type WorkloadName = (typeof WORKLOADS)[number];

const policies = values.policies.split(",").map((name) => RoutingPolicyName.parse(name.trim()));
const workloadNames = values.workloads.split(",").map((name) => {
  const trimmed = name.trim() as WorkloadName;
  if (!WORKLOADS.includes(trimmed)) throw new RangeError(`--workloads: unknown "${name}"`);
  return trimmed;
});
const repeats = integerFlag("--repeats", values.repeats, 0, 20);
const isolates = integerFlag("--isolates", values.isolates, 1, 64);
const workerRollouts = integerFlag("--worker-rollouts", values["worker-rollouts"], 0, 10_000);
const promptTokens = integerFlag("--document-tokens", values["document-tokens"], 2, 100_000);
const sharedTokens = integerFlag(
  "--shared-prompt-tokens",
  values["shared-prompt-tokens"],
  1,
  promptTokens - 1,
);
const numbers = Object.fromEntries(
  (
    [
      ["slow-factor", 1],
      ["bound", 0],
      ["prefill-ms-per-1k-tokens", 0],
      ["per-token-ms", 0],
      ["decode-slowdown", 0],
    ] as const
  ).map(([flag, min]) => {
    const value = Number(values[flag]);
    if (!Number.isFinite(value) || value < min)
      throw new RangeError(`--${flag} must be a finite number >= ${min}`);
    return [flag, value];
  }),
) as Record<
  "slow-factor" | "bound" | "prefill-ms-per-1k-tokens" | "per-token-ms" | "decode-slowdown",
  number
>;
const bound = numbers.bound;

const base: RoutingWorkload = {
  rollouts: integerFlag("--rollouts", values.rollouts, 1, 100_000),
  turns: integerFlag("--turns", values.turns, 1, 100),
  groupSize: integerFlag("--n", values.n, 1, 64),
  concurrency: integerFlag("--concurrency", values.concurrency, 1, 10_000),
  documentTokens: promptTokens,
  sharedPromptTokens: 0,
  maxTokens: integerFlag("--max-tokens", values["max-tokens"], 1, 4096),
  thinkMs: integerFlag("--think-ms", values["think-ms"], 0, 60_000),
  observationWords: integerFlag("--observation-words", values["observation-words"], 0, 100_000),
};
const replicaBase: ReplicaSpec = {
  count: 4,
  slowFactor: 1,
  perTokenMs: numbers["per-token-ms"],
  cache: {
    blockSize: integerFlag("--block-size", values["block-size"], 1, 1024),
    capacityBlocks: integerFlag("--cache-blocks", values["cache-blocks"], 1),
    prefillMsPer1kTokens: numbers["prefill-ms-per-1k-tokens"],
    decodeSlowdown: numbers["decode-slowdown"],
  },
};

/** A workload's requests and replicas (fixed here, before any run). */
function setup(name: WorkloadName): { workload: RoutingWorkload; replicas: ReplicaSpec } {
  if (name === "slow-replica")
    return { workload: base, replicas: { ...replicaBase, slowFactor: numbers["slow-factor"] } };
  return {
    workload: {
      ...base,
      documentTokens: promptTokens - sharedTokens,
      sharedPromptTokens: sharedTokens,
    },
    replicas: replicaBase,
  };
}

/** Policies in repeat `repeat`'s order: rotated by one each repeat, so none always runs first on a cooler machine. */
function order(repeat: number): RoutingPolicyName[] {
  return policies.map((_, i) => policies[(i + repeat) % policies.length]!);
}

const [one, five] = loadavg();
console.log(
  `bench:routing on ${availableParallelism()} cores, load average ${one!.toFixed(2)} (1 min) ${five!.toFixed(2)} (5 min) at start`,
);
console.log(
  `in-process: ${base.rollouts} rollouts x ${base.turns} turns per run, groups of n = ${base.groupSize}, ${base.concurrency} in flight, over ${isolates} router instances (isolates); ${repeats} repeats, policies rotated; Worker: ${workerRollouts} rollouts, all in flight, one run per policy`,
);
console.log(
  `every call: prompt ${promptTokens} tokens + ${base.observationWords}-word observation and ${base.maxTokens}-token answer per turn, ${base.thinkMs} ms env step; replicas: 4, block size ${replicaBase.cache.blockSize}, ${replicaBase.cache.capacityBlocks} blocks each; prefill ${replicaBase.cache.prefillMsPer1kTokens} ms per 1k uncached tokens; decode ${replicaBase.perTokenMs} ms/token, +${replicaBase.cache.decodeSlowdown * 100}% per other running request`,
);
console.log(
  `workloads: slow-replica (the last replica ${numbers["slow-factor"]}x slower; each group's ${promptTokens}-token document is its system prompt); shared-prompt (equal replicas; a ${sharedTokens}-token system prompt every group shares, ${sharedPromptOf(sharedTokens).length} characters, then the group's ${promptTokens - sharedTokens}-token document)`,
);
console.log(
  `constants: sticky_least_loaded's bound ${bound}, SLOW_REPLICA_PACE ${SLOW_REPLICA_PACE}, pace EWMA 0.2 with a 30 s half-life and YOUNG_ROLLOUT_CALLS 2 were tuned on slow-replica (853baad, 7747405, ed1ea7d); hash's load_factor 1.25 and prefix_hash's ${PREFIX_HASH_CHARS} characters and ${VIRTUAL_NODES} virtual nodes were set before any run; nothing was tuned on shared-prompt`,
);

/** Runs `policy` on workload `name` through `caller(urls)`; fresh replicas. */
async function runOnce(
  name: WorkloadName,
  policy: RoutingPolicyName,
  repeat: number,
  run: (urls: string[], workload: RoutingWorkload) => Promise<PolicyRun["result"]>,
  workload = setup(name).workload,
): Promise<PolicyRun> {
  const { replicas } = setup(name);
  const { value, counters } = await withReplicas(replicas, (urls) => run(urls, workload));
  return policyRun(name, policy, repeat, value, counters);
}

const slowIndex = (name: WorkloadName) => (name === "slow-replica" ? replicaBase.count - 1 : null);
const inProcess = new Map<WorkloadName, Map<RoutingPolicyName, PolicyRun[]>>(
  workloadNames.map((name) => [name, new Map(policies.map((policy) => [policy, []]))]),
);
for (let repeat = 0; repeat < repeats; repeat++) {
  for (const name of workloadNames) {
    for (const policy of order(repeat)) {
      const run = await runOnce(name, policy, repeat, (urls, workload) =>
        runWorkload(inProcessCaller({ urls, policy, bound, isolates, seed: repeat + 1 }), workload),
      );
      inProcess.get(name)!.get(policy)!.push(run);
      console.log(`${name} ${policy}${detailLine(run, slowIndex(name)).replace(/^ {2}/, " ")}`);
    }
  }
}

const worker = new Map<WorkloadName, Map<RoutingPolicyName, PolicyRun[]>>();
if (workerRollouts > 0) {
  const stack = await startWorkerStack("http://127.0.0.1:9");
  try {
    for (const name of workloadNames) {
      const workload = {
        ...setup(name).workload,
        rollouts: workerRollouts,
        concurrency: workerRollouts,
      };
      const runs = new Map<RoutingPolicyName, PolicyRun[]>();
      for (const policy of order(0)) {
        const run = await runOnce(
          name,
          policy,
          0,
          async (urls) => {
            const { caller, finish } = await workerCaller(
              stack.workerUrl,
              { urls, policy, bound, maxTokens: workload.maxTokens },
              rolloutLabels(workload),
            );
            const result = await runWorkload(caller, workload);
            await finish();
            return result;
          },
          workload,
        );
        runs.set(policy, [run]);
        console.log(
          `worker ${name} ${policy}${detailLine(run, slowIndex(name)).replace(/^ {2}repeat 1:/, ":")}`,
        );
      }
      worker.set(name, runs);
    }
  } finally {
    await stack.stop();
  }
}

/** The in-process headlines of workload `name` and the ratios the goals name, each taken within a repeat. */
function printInProcess(name: WorkloadName, byPolicy: Map<RoutingPolicyName, PolicyRun[]>): void {
  for (const policy of policies) console.log(headline("", byPolicy.get(policy)!));
  const calls = (run: PolicyRun) => run.callsPerSecond;
  const sticky = ratio(byPolicy, "sticky_least_loaded", "least_loaded", calls);
  const prefix = ratio(byPolicy, "sticky_least_loaded", "prefix_hash", calls);
  const p90 = ratio(byPolicy, "sticky_least_loaded", "hash", (run) => run.groupP90s);
  if (sticky)
    console.log(`${name} sticky_least_loaded / least_loaded calls/s: ${sticky} (goal >= 1.5x)`);
  if (prefix) console.log(`${name} sticky_least_loaded / prefix_hash calls/s: ${prefix}`);
  if (p90) console.log(`${name} sticky_least_loaded / hash group p90: ${p90} (goal <= 0.7x)`);
}

console.log("");
for (const name of workloadNames) {
  const byPolicy = inProcess.get(name)!;
  if (repeats > 0) printInProcess(name, byPolicy);
  const workerRuns = worker.get(name);
  if (!workerRuns) continue;
  for (const policy of policies) console.log(headline("worker ", workerRuns.get(policy)!));
  const workerRank = ranking(workerRuns).join(" > ");
  if (repeats === 0) {
    console.log(`${name} ranking by calls/s: worker ${workerRank}`);
    continue;
  }
  const inRank = ranking(byPolicy).join(" > ");
  console.log(
    `${name} ranking by calls/s: in-process ${inRank}; worker ${workerRank} (${inRank === workerRank ? "the same" : "differs"})`,
  );
}
console.log(`load average ${loadavg()[0]!.toFixed(2)} (1 min) at the end`);
