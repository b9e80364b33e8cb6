/**
 * @module `npm run bench:routing`: the `vllm` backend's routing policies side by side, over
 * simulated replicas that model vLLM's prefix cache (docs/vllm.md, "The engine"):
 * 4 replicas, one slower, each in its own process and fresh for every policy; 256 rollouts × 8
 * turns of a long-prefix dialogue agent in GRPO groups of 8 (routing-workload.ts). Per policy:
 *
 *   policy <name>: calls/s X, ttft p50 A ms p90 B ms, prefix hit rate H%, max replica load L, group p90 latency G s
 *
 * then the goals' ratios. Prefill defaults to 45 ms per 1k uncached tokens: an 8B model's
 * forward pass is about 2 × 8e9 FLOP per token, an H100 SXM does 989 dense BF16 TFLOP/s
 * (NVIDIA's datasheet), so at the ~40% utilisation vLLM's prefill reaches an 8k-token prompt
 * costs about 0.35 s. The machine is shared: the header prints its load average.
 */
import { availableParallelism, loadavg } from "node:os";
import { commandLine, integerFlag } from "../scripts/command-line";
import { createVllmBackend } from "../src/gateway/backends";
import { RoutingPolicyName } from "../src/schemas/backend-config";
import type { PrefixCacheOptions } from "../tools/simulator/options";
import { percentile } from "./latency-table";
import { type RoutingWorkload, runWorkload, type WorkloadResult } from "./routing-workload";
import { startSimulatorProcess } from "./simulator-process";

const values = commandLine({
  usage: "npm run bench:routing -- [options]",
  description:
    "hash vs least_loaded vs sticky_least_loaded routing over simulated vLLM replicas with prefix caches, one of them slower.",
  flags: {
    policies: {
      type: "string",
      default: "hash,least_loaded,sticky_least_loaded",
      help: "policies to run, in order",
    },
    rollouts: { type: "string", default: "256", help: "rollouts per policy" },
    turns: { type: "string", default: "8", help: "calls per rollout" },
    n: { type: "string", default: "8", help: "GRPO group size (members share the prompt)" },
    concurrency: {
      type: "string",
      default: "128",
      help: "rollouts in flight at once (whole groups)",
    },
    replicas: { type: "string", default: "4", help: "simulated replicas; the last one is slow" },
    "slow-factor": {
      type: "string",
      default: "2",
      help: "how much slower the slow replica prefills and decodes",
    },
    bound: {
      type: "string",
      default: "16",
      help: "sticky_least_loaded's bound (calls in flight beyond the least-loaded replica)",
    },
    "document-tokens": {
      type: "string",
      default: "3000",
      help: "tokens of each group's shared document",
    },
    "max-tokens": { type: "string", default: "48", help: "tokens per answer" },
    "think-ms": {
      type: "string",
      default: "200",
      help: "environment step between a rollout's calls",
    },
    "observation-words": {
      type: "string",
      default: "256",
      help: "words of the observation each turn adds (about one token each)",
    },
    "prefill-ms-per-1k-tokens": {
      type: "string",
      default: "45",
      help: "prefill cost of 1k uncached tokens (H100, 8B model)",
    },
    "per-token-ms": {
      type: "string",
      default: "10",
      help: "decode time per token with one request running",
    },
    "decode-slowdown": {
      type: "string",
      default: "0.01",
      help: "per-token time grows by this per other running request",
    },
    "block-size": { type: "string", default: "16", help: "tokens per KV block" },
    "cache-blocks": {
      type: "string",
      default: "6144",
      help: "KV blocks per replica (LRU beyond): a quarter of an 8B model's on one H100, as a replica here runs ~32 of the ~128 sequences one batches",
    },
  },
});

const policies = values.policies.split(",").map((name) => RoutingPolicyName.parse(name.trim()));
const replicaCount = integerFlag("--replicas", values.replicas, 2, 16);
const slowFactor = Number(values["slow-factor"]);
const bound = Number(values.bound);
const workload: RoutingWorkload = {
  rollouts: integerFlag("--rollouts", values.rollouts, 1, 100_000),
  turns: integerFlag("--turns", values.turns, 1, 100),
  groupSize: integerFlag("--n", values.n, 1, 64),
  concurrency: integerFlag("--concurrency", values.concurrency, 1, 10_000),
  documentTokens: integerFlag("--document-tokens", values["document-tokens"], 1, 100_000),
  maxTokens: integerFlag("--max-tokens", values["max-tokens"], 1, 4096),
  thinkMs: integerFlag("--think-ms", values["think-ms"], 0, 60_000),
  observationWords: integerFlag("--observation-words", values["observation-words"], 0, 100_000),
};
const perTokenMs = Number(values["per-token-ms"]);
const cache: Required<PrefixCacheOptions> = {
  blockSize: integerFlag("--block-size", values["block-size"], 1, 1024),
  capacityBlocks: integerFlag("--cache-blocks", values["cache-blocks"], 1),
  prefillMsPer1kTokens: Number(values["prefill-ms-per-1k-tokens"]),
  decodeSlowdown: Number(values["decode-slowdown"]),
};
for (const [flag, value] of [
  ["--slow-factor", slowFactor],
  ["--bound", bound],
  ["--per-token-ms", perTokenMs],
  ["--prefill-ms-per-1k-tokens", cache.prefillMsPer1kTokens],
  ["--decode-slowdown", cache.decodeSlowdown],
] as const) {
  if (!Number.isFinite(value) || value < 0)
    throw new RangeError(`${flag} must be a finite number >= 0`);
}

/** Starts the replicas (the last one `slowFactor` slower), runs `fn`, reads their cache counters, stops them. */
async function withReplicas<T>(
  fn: (urls: string[]) => Promise<T>,
): Promise<{ value: T; queries: number; hits: number; preemptions: number }> {
  const replicas = await Promise.all(
    Array.from({ length: replicaCount }, (_, i) => {
      const factor = i === replicaCount - 1 ? slowFactor : 1;
      return startSimulatorProcess({
        seed: i + 1,
        perRequestMetrics: true,
        latency: { ttftMs: 0, perTokenMs: perTokenMs * factor },
        prefixCache: { ...cache, prefillMsPer1kTokens: cache.prefillMsPer1kTokens * factor },
      });
    }),
  );
  try {
    const value = await fn(replicas.map((replica) => replica.url));
    const stats = await Promise.all(
      replicas.map(
        async (replica) =>
          (await (await fetch(`${replica.url}/sim/stats`)).json()) as {
            replica: { prefixCacheQueries: number; prefixCacheHits: number; preemptions: number };
          },
      ),
    );
    return {
      value,
      queries: stats.reduce((sum, s) => sum + s.replica.prefixCacheQueries, 0),
      hits: stats.reduce((sum, s) => sum + s.replica.prefixCacheHits, 0),
      preemptions: stats.reduce((sum, s) => sum + s.replica.preemptions, 0),
    };
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop()));
  }
}

interface PolicyRun {
  policy: RoutingPolicyName;
  result: WorkloadResult;
  hitRate: number;
  /** Sequences the replicas' engines preempted (KV cache full), all replicas together. */
  preemptions: number;
  callsPerSecond: number;
  groupP90s: number;
  /** The slow replica's url (the last one). */
  slowUrl: string;
}

async function runPolicy(policy: RoutingPolicyName): Promise<PolicyRun> {
  let slowUrl = "";
  const {
    value: result,
    queries,
    hits,
    preemptions,
  } = await withReplicas((urls) => {
    slowUrl = urls.at(-1)!;
    return runWorkload(createVllmBackend({ replicas: urls, routing: { policy, bound } }), workload);
  });
  return {
    policy,
    result,
    hitRate: queries > 0 ? hits / queries : 0,
    preemptions,
    callsPerSecond: result.calls / (result.wallMs / 1000),
    groupP90s: percentile(result.groupMs, 90) / 1000,
    slowUrl,
  };
}

/** Whether a reply's replica name (the replica's OpenAI base, `…/v1`) is the slow replica's. */
function isSlow(run: PolicyRun, replica: string): boolean {
  return replica === run.slowUrl || replica.startsWith(`${run.slowUrl}/`);
}

/** The slowest groups, each with its calls on the slow replica and the replicas it used: what sets the group p90. */
function slowestGroups(run: PolicyRun, count = 5): string {
  return run.result.groupMs
    .map((ms, i) => ({ ms, replicas: run.result.groupReplicas[i]! }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count)
    .map(({ ms, replicas }) => {
      const calls = [...replicas.values()].reduce((n, c) => n + c, 0);
      const slow = [...replicas].reduce((n, [name, c]) => (isSlow(run, name) ? n + c : n), 0);
      return `${(ms / 1000).toFixed(1)} s (${slow}/${calls} calls slow, ${replicas.size} replicas)`;
    })
    .join(", ");
}

function line(run: PolicyRun): string {
  const { result } = run;
  const ttft = (p: number) => percentile(result.ttftMs, p).toFixed(0);
  return `policy ${run.policy}: calls/s ${run.callsPerSecond.toFixed(1)}, ttft p50 ${ttft(50)} ms p90 ${ttft(90)} ms, prefix hit rate ${(run.hitRate * 100).toFixed(1)}%, max replica load ${result.maxReplicaLoad}, group p90 latency ${run.groupP90s.toFixed(1)} s, preemptions ${run.preemptions}`;
}

const [one, five] = loadavg();
console.log(
  `bench:routing on ${availableParallelism()} cores, load average ${one!.toFixed(2)} (1 min) ${five!.toFixed(2)} (5 min) at start`,
);
console.log(
  `workload: ${workload.rollouts} rollouts x ${workload.turns} turns, groups of n = ${workload.groupSize}, ${workload.concurrency} rollouts in flight, document ${workload.documentTokens} tokens, ${workload.maxTokens} tokens per answer, ${workload.observationWords}-word observation and ${workload.thinkMs} ms env step per turn`,
);
console.log(
  `replicas: ${replicaCount}, the last ${slowFactor}x slower; block size ${cache.blockSize}, ${cache.capacityBlocks} blocks (${cache.blockSize * cache.capacityBlocks} tokens) each; prefill ${cache.prefillMsPer1kTokens} ms per 1k uncached tokens (8k: ${((8 * cache.prefillMsPer1kTokens) / 1000).toFixed(2)} s); decode ${perTokenMs} ms/token, +${cache.decodeSlowdown * 100}% per other running request; sticky bound ${bound}`,
);

const runs: PolicyRun[] = [];
for (const policy of policies) {
  const run = await runPolicy(policy);
  runs.push(run);
  const spread = [...run.result.callsPerReplica.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, calls]) => (isSlow(run, name) ? `${calls} (slow)` : `${calls}`))
    .join("/");
  console.log(
    `${line(run)}   (calls per replica ${spread}, wall ${(run.result.wallMs / 1000).toFixed(1)} s)`,
  );
  console.log(`  slowest groups: ${slowestGroups(run)}`);
}

const byName = new Map(runs.map((run) => [run.policy, run]));
const sticky = byName.get("sticky_least_loaded");
const least = byName.get("least_loaded");
const hash = byName.get("hash");
if (sticky && least)
  console.log(
    `sticky_least_loaded / least_loaded calls/s: ${(sticky.callsPerSecond / least.callsPerSecond).toFixed(2)}x (goal >= 1.5x)`,
  );
if (sticky && hash)
  console.log(
    `sticky_least_loaded / hash group p90 latency: ${(sticky.groupP90s / hash.groupP90s).toFixed(2)}x (goal <= 0.7x)`,
  );
console.log(`load average ${loadavg()[0]!.toFixed(2)} (1 min) at the end`);
