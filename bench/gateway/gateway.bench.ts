/**
 * @module `npm run bench:gateway`: what the gateway adds to one chat call, against one simulator
 * process at a fixed latency, measured side by side in one run:
 *
 * - (a) direct: the `openai` client calls the simulator (the baseline);
 * - (b) HTTP path: the same client calls an external rollout's `llm.base_url` with its `api_key`,
 *   on Miniflare's API by default (the client reaches workerd directly, as in production); with
 *   `--stack wrangler`, through `wrangler dev`, plus (b') the same on the Worker's own workerd
 *   socket, skipping wrangler's local proxy, so b − b' is that proxy hop;
 * - (c) in-process path: `dialogue` rollouts driven inside the Worker. There is no client to
 *   time these calls, so their timings come from the records the Worker writes:
 *   `Step.duration_ms` (agent update → policy admission → shaping → upstream call → capture →
 *   env step; the policy release runs alongside, no step commit) and `LlmCall.latency_ms`
 *   (upstream call and capture; neither admission nor release). Local workerd clocks advance without I/O
 *   (production's only advance at I/O) and have 1 ms resolution.
 * - (s) the serving path (issue 55, serving-arm.ts): the same conversations through
 *   `/v1/online/chat/completions` with an application key, alternated with (b) conversation by
 *   conversation, after the phases above; printed as serving − gateway, with its own concurrent rounds.
 *
 * Every call is a turn of a 5-turn conversation shaped like the dialogue agent's, max_tokens 16,
 * logprobs and return_token_ids on. The simulator measures its own service time for each call
 * (timed-simulator-child.ts), printed next to each path so the server's share is visible.
 * Sequential phase: one call in flight, paths interleaved round by round. Concurrent phase:
 * `--concurrency` conversations (or rollouts) at once, each path in turn.
 */
import { cpus } from "node:os";
import { RolloutClient } from "../../scripts/rollout-client";
import { type StackKind, startBenchStack } from "../kit/bench-stack";
import { runConversations } from "../kit/chat-calls";
import { startWorkerdFloor } from "../kit/workerd-floor";
import { readDialogueTimings, runDialogues } from "./dialogue-runs";
import { createExternalRollouts, finishAndReadCalls } from "./external-rollouts";
import { formatTable, percentile, type Series } from "../kit/latency-table";
import { formatObjectRequests, readObjectRequests } from "../kit/object-requests";
import { startTimedSimulator } from "../kit/timed-simulator";
import { healthRoundTrips } from "../kit/worker-socket";
import { commandLine } from "../../scripts/command-line";
import { runServingArm } from "./serving-arm";
import { formatServingLines } from "./serving-report";
import { setUpServing } from "./serving-setup";

const values = commandLine({
  usage: "npm run bench:gateway -- [options]",
  description:
    "Chat calls directly, through a rollout's HTTP gateway, in-process and through a bare proxy Worker (the floor): added latency p50/p99 and ratios.",
  flags: {
    "seq-rounds": { type: "string", default: "4", help: "sequential rounds" },
    "seq-conversations": {
      type: "string",
      default: "5",
      help: "conversations per sequential round",
    },
    "conc-rounds": { type: "string", default: "2", help: "concurrent rounds" },
    "conc-conversations": {
      type: "string",
      default: "32",
      help: "conversations per concurrent round",
    },
    concurrency: { type: "string", default: "16", help: "conversations at once" },
    turns: { type: "string", default: "5", help: "turns per conversation" },
    "max-tokens": { type: "string", default: "16", help: "max_tokens per call" },
    "ttft-ms": { type: "string", default: "20", help: "simulator time to first token" },
    "per-token-ms": { type: "string", default: "0.5", help: "simulator time per generated token" },
    port: { type: "string", default: "8798", help: "Worker port" },
    stack: {
      type: "string",
      default: "miniflare",
      help: "miniflare (no dev proxy) or wrangler (adds path b': the proxy bypassed)",
    },
    "serving-repeats": {
      type: "string",
      default: "7",
      help: "serving arm: sequential repeats (0: no serving arm)",
    },
    "serving-pairs": {
      type: "string",
      default: "10",
      help: "serving arm: alternated conversation pairs per repeat",
    },
    "serving-concurrency": {
      type: "string",
      default: "64",
      help: "serving arm: conversations at once in its concurrent rounds",
    },
    "serving-rounds": { type: "string", default: "4", help: "serving arm: concurrent rounds" },
    "budget-s": {
      type: "string",
      default: "600",
      help: "stop starting rounds after this many seconds",
    },
  },
});
/** A numeric flag, checked eagerly: `--name must be a number >= min`. */
function flag(name: keyof typeof values, min: number): number {
  const value = Number(values[name]);
  if (!Number.isFinite(value) || value < min)
    throw new RangeError(`--${name} must be a number >= ${min}, got "${values[name]}"`);
  return value;
}
const turns = flag("turns", 1);
const maxTokens = flag("max-tokens", 1);
const concurrency = flag("concurrency", 1);
const seqRounds = flag("seq-rounds", 1);
const seqConversations = flag("seq-conversations", 1);
const concRounds = flag("conc-rounds", 1);
const concConversations = flag("conc-conversations", 1);
const budgetMs = flag("budget-s", 10) * 1000;
const servingRepeats = flag("serving-repeats", 0);
const servingPairs = flag("serving-pairs", 1);
const servingConcurrency = flag("serving-concurrency", 1);
const servingRounds = flag("serving-rounds", 1);
flag("ttft-ms", 0);
flag("per-token-ms", 0);
/** Per rollout (c), from creation to its end event. */
const ROLLOUT_TIMEOUT_MS = 60_000;

type PathKey = "a" | "b" | "b'" | "c" | "f" | "f3";
/** The floor paths: a bare pass-through proxy Worker (kit/workerd-floor.ts), without and with object round trips per call. */
const FLOOR_RPCS: Partial<Record<PathKey, number>> = { f: 0, f3: 3 };
const isFloor = (key: PathKey) => FLOOR_RPCS[key] !== undefined;
/** What one path accumulated over a phase's rounds. */
interface Acc {
  startMs: number[];
  latencyMs: number[];
  stepStartMs: number[];
  stepMs: number[];
  /** (b): the gateway's own `LlmCall.latency_ms` of the same calls, read back from the rollouts. */
  innerStartMs: number[];
  innerMs: number[];
  serviceMs: number[];
  tokens: number[];
  wallMs: number;
  /** CPU ms of the Worker's workerd, and of dev tooling production does not have (wrangler's proxy and Node). */
  cpu: { worker: number; tooling: number };
  /** (c): rollouts run, and those not succeeded. */
  rollouts: number;
  notSucceeded: number;
}
const newAcc = (): Acc => ({
  startMs: [],
  latencyMs: [],
  stepStartMs: [],
  stepMs: [],
  innerStartMs: [],
  innerMs: [],
  serviceMs: [],
  tokens: [],
  wallMs: 0,
  cpu: { worker: 0, tooling: 0 },
  rollouts: 0,
  notSucceeded: 0,
});

const sim = await startTimedSimulator([
  "--latency-ttft-ms",
  values["ttft-ms"],
  "--latency-per-token-ms",
  values["per-token-ms"],
  "--seed",
  "3",
]);
const kind = values.stack as StackKind;
if (kind !== "miniflare" && kind !== "wrangler")
  throw new RangeError(`--stack must be miniflare or wrangler, got "${values.stack}"`);
const stack = await startBenchStack({
  kind,
  port: Number(values.port),
  modelServerUrl: sim.url,
  stateDir: "bench-gateway",
}).catch(async (error: unknown) => {
  await sim.stop();
  throw error;
});
const floor = await startWorkerdFloor(sim.url).catch(async (error: unknown) => {
  await stack.stop();
  await sim.stop();
  throw error;
});
const shutdown = async () => {
  await floor.stop();
  await stack.stop();
  await sim.stop();
};
// Bounded in time: a hung phase stops both children and exits non-zero.
const watchdog = setTimeout(() => {
  console.error(`bench:gateway exceeded --budget-s ${values["budget-s"]}; stopping`);
  void shutdown().finally(() => process.exit(2));
}, budgetMs);

try {
  const client = new RolloutClient(stack.workerUrl);
  // Only wrangler dev has a proxy to bypass; on Miniflare (b) already reaches workerd directly.
  const socket = stack.directUrl !== stack.workerUrl ? { url: stack.directUrl } : null;
  const paths: PathKey[] = socket ? ["a", "b", "b'", "c", "f", "f3"] : ["a", "b", "c", "f", "f3"];

  /** Runs one path once and adds its calls to `acc`; only the calls themselves are inside the timed window. */
  async function runPath(
    key: PathKey,
    plan: { conversations: number; concurrency: number; firstTopic: number },
    acc: Acc,
  ): Promise<void> {
    const shape = { ...plan, turns, maxTokens };
    const origin = key === "b'" ? socket!.url : stack.workerUrl;
    const external =
      key === "b" || key === "b'"
        ? await createExternalRollouts(origin, plan.conversations, {
            max_tokens_per_call: maxTokens,
          })
        : [];
    await sim.take(); // drop anything answered before this window
    // A floor path's CPU is its own workerd's; every other path's is the stack's.
    const cpuNow = () => (isFloor(key) ? { worker: floor.cpu(), tooling: 0 } : stack.cpu());
    const cpu0 = cpuNow();
    const addCpu = () => {
      const cpu1 = cpuNow();
      for (const part of ["worker", "tooling"] as const) acc.cpu[part] += cpu1[part] - cpu0[part];
    };
    if (key === "c") {
      const run = await runDialogues(client, {
        rollouts: plan.conversations,
        turns,
        maxTokens,
        concurrency: plan.concurrency,
        firstTopic: plan.firstTopic,
        timeoutMs: ROLLOUT_TIMEOUT_MS,
      });
      addCpu();
      acc.wallMs += run.wallMs;
      acc.rollouts += run.ids.length;
      acc.notSucceeded += run.notSucceeded;
      const timings = await readDialogueTimings(client, run.ids);
      acc.startMs.push(...timings.callStartMs);
      acc.latencyMs.push(...timings.callMs);
      acc.stepStartMs.push(...timings.stepStartMs);
      acc.stepMs.push(...timings.stepMs);
      acc.tokens.push(...timings.completionTokens);
    } else {
      const endpoint = { baseURL: `${sim.url}/v1`, apiKey: "none" };
      // A floor conversation gets its own key, so its object round trips go to an object of its own.
      const floorEndpoint = (i: number) => ({
        baseURL: `${floor.url}/proxy/${FLOOR_RPCS[key]}/v1`,
        apiKey: `floor-${plan.firstTopic + i}`,
      });
      const timings = await runConversations(
        key === "a" ? () => endpoint : isFloor(key) ? floorEndpoint : (i) => external[i]!.endpoint,
        shape,
      );
      addCpu();
      acc.wallMs += timings.wallMs;
      acc.startMs.push(...timings.startMs);
      acc.latencyMs.push(...timings.latencyMs);
      acc.tokens.push(...timings.completionTokens);
    }
    acc.serviceMs.push(...(await sim.take()));
    if (external.length > 0) {
      const recorded = await finishAndReadCalls(origin, external);
      acc.innerStartMs.push(...recorded.callStartMs);
      acc.innerMs.push(...recorded.callMs);
    }
  }

  /** Runs every path `rounds` times, rotating the order each round so none always goes first. */
  async function runPhase(
    rounds: number,
    conversations: number,
    inFlight: number,
    topicBase: number,
  ): Promise<Map<PathKey, Acc>> {
    const results = new Map(paths.map((key) => [key, newAcc()] as const));
    for (let round = 0; round < rounds; round++) {
      const order = paths.map((_, i) => paths[(i + round) % paths.length]!);
      for (const key of order)
        await runPath(
          key,
          { conversations, concurrency: inFlight, firstTopic: topicBase + round * conversations },
          results.get(key)!,
        );
    }
    return results;
  }

  // Warm-up: compile the Worker's code paths, open connections, create the policy object.
  await runPhase(1, 2, 2, 90_000);

  const health = socket ? await healthRoundTrips(stack.workerUrl, socket.url, 200) : null;
  const requestsBefore = await readObjectRequests(stack.workerUrl);
  const sequential = await runPhase(seqRounds, seqConversations, 1, 0);
  const concurrent = await runPhase(concRounds, concConversations, concurrency, 10_000);
  const requestsAfter = await readObjectRequests(stack.workerUrl);
  // The serving arm runs after the object readings above, so their figures are the other paths' alone.
  const servingPlan = {
    workerUrl: stack.workerUrl,
    turns,
    maxTokens,
    repeats: servingRepeats,
    pairs: servingPairs,
    rounds: servingRounds,
    concurrency: servingConcurrency,
    runTag: `run-${Date.now().toString(36)}`,
  };
  const serving =
    servingRepeats > 0
      ? await setUpServing(stack.workerUrl, sim.url).then(async (apiKey) => {
          const plan = { ...servingPlan, apiKey };
          return { plan, results: await runServingArm(plan) };
        })
      : null;
  // Model calls through the gateway in both phases: every path but (a) goes through it.
  const gatewayCalls = [sequential, concurrent].reduce(
    (n, phase) =>
      n +
      paths
        .filter((k) => k !== "a" && !isFloor(k))
        .reduce((m, k) => m + phase.get(k)!.latencyMs.length, 0),
    0,
  );

  const labels: Record<PathKey, string> = {
    a: "(a) direct: openai → simulator",
    b:
      kind === "wrangler"
        ? "(b) gateway HTTP via wrangler dev"
        : "(b) gateway HTTP (Miniflare, no proxy)",
    "b'": "(b') gateway HTTP, dev proxy bypassed",
    c: "(c) in-process, LlmCall.latency_ms",
    f: "(f) floor: bare proxy Worker",
    f3: "(f3) floor: bare proxy + 3 object RPCs",
  };
  const rate = (acc: Acc, calls: number) => (calls / (acc.wallMs / 1000)).toFixed(0);
  const seriesOf = (results: Map<PathKey, Acc>, withRate: boolean): Series[] => {
    const rows: Series[] = [];
    for (const [key, acc] of results) {
      const throughput = withRate
        ? key === "c"
          ? `(${rate(acc, acc.latencyMs.length)})`
          : rate(acc, acc.latencyMs.length)
        : undefined;
      if (key === "c")
        rows.push({
          label: "(c) in-process, Step.duration_ms",
          startMs: acc.stepStartMs,
          latencyMs: acc.stepMs,
          serviceMs: acc.serviceMs,
          throughput,
        });
      rows.push({
        label: labels[key],
        startMs: acc.startMs,
        latencyMs: acc.latencyMs,
        serviceMs: acc.serviceMs,
        throughput: key === "c" ? undefined : throughput,
      });
      if (key === "b")
        rows.push({
          label: "    (b) inside the Worker: LlmCall.latency_ms",
          startMs: acc.innerStartMs,
          latencyMs: acc.innerMs,
          serviceMs: acc.serviceMs,
        });
    }
    return rows;
  };
  const table = (title: string, results: Map<PathKey, Acc>, withRate: boolean) => {
    const [baseline, ...rows] = seriesOf(results, withRate);
    return formatTable(title, baseline!, rows);
  };
  const perCall = (results: Map<PathKey, Acc>, part: keyof Acc["cpu"]) =>
    paths
      .map(
        (k) => `${k} ${(results.get(k)!.cpu[part] / results.get(k)!.latencyMs.length).toFixed(2)}`,
      )
      .join(", ");
  const meanTokens = (results: Map<PathKey, Acc>) =>
    paths
      .map(
        (k) =>
          `${k} ${(results.get(k)!.tokens.reduce((x, y) => x + y, 0) / results.get(k)!.tokens.length).toFixed(1)}`,
      )
      .join(", ");

  console.log(
    `bench:gateway — the same chat calls three ways and through the workerd floor, one simulator process (ttft ${values["ttft-ms"]} ms + ${values["per-token-ms"]} ms/token)`,
  );
  console.log(
    `${turns}-turn conversations shaped like the dialogue agent's; max_tokens ${maxTokens}, logprobs, return_token_ids; ${cpus().length} CPUs; loopback only`,
  );
  console.log("");
  console.log(table(`sequential: 1 in flight, ${seqRounds} interleaved rounds`, sequential, false));
  console.log("");
  console.log(
    table(`concurrent: ${concurrency} in flight, ${concRounds} rounds`, concurrent, true),
  );
  console.log("");
  if (socket) {
    const p = (values: number[], q: number) => percentile(values, q).toFixed(1);
    const b50 = (key: PathKey) => percentile(sequential.get(key)!.latencyMs, 50);
    console.log(
      `wrangler dev proxy hop: GET /health ×${health!.directMs.length} alternating, p50 ${p(health!.viaProxyMs, 50)} ms via proxy vs ${p(health!.directMs, 50)} ms direct ` +
        `(p99 ${p(health!.viaProxyMs, 99)} vs ${p(health!.directMs, 99)}); sequential chat p50 (b) − (b') = ${(b50("b") - b50("b'")).toFixed(1)} ms`,
    );
    console.log(
      `  wrangler dev's proxy and Node:    ${perCall(sequential, "tooling")} | ${perCall(concurrent, "tooling")}`,
    );
  } else if (kind === "wrangler") {
    console.log(
      "the Worker's own socket was not found: the wrangler dev proxy hop is included in (b) and not measured separately",
    );
  }
  console.log(
    "CPU ms per call (sequential | concurrent), the Worker's workerd, /proc at 10 ms ticks; a = the idle stack's background, c = the whole rollout:",
  );
  console.log(`  ${perCall(sequential, "worker")} | ${perCall(concurrent, "worker")}`);
  const checkOf = (results: Map<PathKey, Acc>) =>
    paths
      .filter((k) => k !== "a" && !isFloor(k))
      .map((k) => {
        const acc = results.get(k)!;
        return k === "c"
          ? `c ${acc.rollouts - acc.notSucceeded}/${acc.rollouts} rollouts succeeded`
          : `${k} ${acc.innerMs.length}/${acc.latencyMs.length} calls recorded`;
      })
      .join(", ");
  const checks = [checkOf(sequential), checkOf(concurrent)];
  console.log(`checks (sequential | concurrent): ${checks.join(" | ")}`);
  for (const line of formatObjectRequests(requestsBefore, requestsAfter, gatewayCalls))
    console.log(line);
  const added = (key: PathKey, q: number) =>
    percentile(sequential.get(key)!.latencyMs, q) - percentile(sequential.get("a")!.latencyMs, q);
  const bestHttp: PathKey = socket ? "b'" : "b";
  console.log(
    `goal row: gateway over HTTP (${bestHttp}), added sequential p50 / p99: ${added(bestHttp, 50) >= 0 ? "+" : ""}${added(bestHttp, 50).toFixed(1)} / ${added(bestHttp, 99) >= 0 ? "+" : ""}${added(bestHttp, 99).toFixed(1)} ms (issue 11 goal: ≤ +3 / ≤ +10 ms)`,
  );
  console.log(
    `gateway (${bestHttp}) above the floor, sequential p50 / p99: ${(added(bestHttp, 50) - added("f3", 50)).toFixed(1)} / ${(added(bestHttp, 99) - added("f3", 99)).toFixed(1)} ms over (f3); ` +
      `(f3) itself adds ${added("f3", 50).toFixed(1)} / ${added("f3", 99).toFixed(1)} ms over direct, (f) ${added("f", 50).toFixed(1)} / ${added("f", 99).toFixed(1)} ms`,
  );
  console.log(
    `mean completion tokens per call (sequential | concurrent): ${meanTokens(sequential)} | ${meanTokens(concurrent)}`,
  );
  if (serving) {
    console.log("");
    for (const line of formatServingLines(serving.plan, serving.results)) console.log(line);
  }
  console.log("");
  const notes = [
    "method: (a)/(b)/(b') are timed around each openai chat.completions.create in this process (maxRetries 0); (c) comes from the Worker's records:",
    "  Step.duration_ms = agent update + policy admission + shaping + upstream call + capture + env step (not the policy release, which runs alongside, nor the step commit);",
    "  LlmCall.latency_ms = upstream call + capture (not the admission, nor the release). Both are whole milliseconds on the Worker's clock.",
    "  (b) inside the Worker = LlmCall.latency_ms of (b)'s own calls; (b) minus it = HTTP in/out, key check, session admit, policy admission, recording.",
    "  (f)/(f3) = the same calls through a bare Worker on its own workerd that passes each call through (bench/kit/workerd-floor.ts): the floor of any",
    "  gateway in workerd; (f3) adds the 3 Durable Object round trips a recorded call of ours needs at the least (admit, release, record; one SQLite write each).",
    "  server p50 = the simulator's own service time for the same calls (request received → last byte sent), measured in its process.",
    "  in flight = mean calls in flight as each call started, from the calls' own start times and durations (what they saw, not what was asked).",
    "  +p50/+p99 = ours − (a) at that percentile; ×p50/×p99 = ours / (a); (a) ran in the same rounds against the same simulator.",
    "caveats: (c) calls/s in parentheses is whole-rollout throughput (create, queue delivery, step commits, finish), not a call-path figure;",
    "  local workerd clocks advance during CPU work (production's only at I/O); Durable Objects are local here (in-process RPC, SQLite on local disk);",
    "  in production, admission and recording RPCs may cross data centres and the model server is a real network hop away: none of that is measured;",
    kind === "wrangler"
      ? "  wrangler dev's Node processes spend CPU on every gateway call even when its proxy is bypassed (b'); production has no such processes;"
      : "  on Miniflare's API no dev proxy sits in front of workerd;",
    `  ${cpus().length} CPUs are shared by the simulator, workerd${kind === "wrangler" ? ", wrangler's proxy and Node" : ""} and this client: concurrent figures are CPU-bound.`,
  ];
  console.log(notes.join("\n"));
} finally {
  clearTimeout(watchdog);
  await shutdown();
}
