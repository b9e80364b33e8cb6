/**
 * @module bench:gateway's serving arm (issue 55): the same conversations through the serving path
 * (`POST /v1/online/chat/completions`, an application key, `x-edge-rollout-session`) and through
 * a rollout's gateway (path b: an external rollout's `llm.base_url`), on the same Worker and the
 * same simulator.
 *
 * - Sequential: conversation pairs, one call in flight, the two paths alternated pair by pair
 *   (which goes first alternates too); the difference of percentiles is taken within each repeat.
 * - Concurrent: `concurrency` conversations at once on one path, then on the other (rotated each
 *   round), with the policy object's and the admission shards' own request counts read around
 *   each path's window.
 *
 * A serving conversation's first call opens its session (the application object assigns its
 * version, the session's rollout is created); a rollout's is created before the timed window. So
 * turns 2.. are compared, and first calls are reported apart.
 */
import { type CallTimings, runConversations } from "../kit/chat-calls";
import { type ObjectRequests, readObjectRequests, requestsBetween } from "../kit/object-requests";
import { createExternalRollouts, finishAndReadCalls } from "./external-rollouts";
import { servingEndpoint } from "./serving-setup";

/** The arm's parameters, fixed before it runs. */
export interface ServingPlan {
  workerUrl: string;
  apiKey: string;
  turns: number;
  maxTokens: number;
  /** Sequential repeats, and conversation pairs in each. */
  repeats: number;
  pairs: number;
  /** Concurrent rounds, and conversations at once (each path runs that many conversations). */
  rounds: number;
  concurrency: number;
  /** Makes this run's session ids unique (the stack's state may outlive a run). */
  runTag: string;
}

/** One path's calls, split by turn. */
export interface PathCalls {
  /** Turn 1: on the serving path, the call that opened the session. */
  firstMs: number[];
  /** Turns 2..: the per-call path. */
  laterMs: number[];
  tokens: number[];
  wallMs: number;
  /** Gateway only: calls its rollouts recorded (read back after the window). */
  recorded: number;
  /** Concurrent only: requests the policy object and the admission shards served in the window. */
  policyRequests: number;
  shardRequests: number;
}

/** What the arm measured. */
export interface ServingResults {
  /** Per sequential repeat: [gateway, serving]. */
  sequential: Array<{ gateway: PathCalls; serving: PathCalls }>;
  concurrent: Array<{ gateway: PathCalls; serving: PathCalls }>;
  /** Sequential calls whose completion token counts matched between the two paths, of all compared. */
  sameTokens: { equal: number; compared: number };
}

type PathName = "gateway" | "serving";
/** The calls' `seed`, fixed so both paths' conversations get the same completions. */
const SEED = 7;

const emptyCalls = (): PathCalls => ({
  firstMs: [],
  laterMs: [],
  tokens: [],
  wallMs: 0,
  recorded: 0,
  policyRequests: 0,
  shardRequests: 0,
});

function addTimings(calls: PathCalls, timings: CallTimings): void {
  timings.latencyMs.forEach((ms, i) =>
    (timings.turn[i] === 1 ? calls.firstMs : calls.laterMs).push(ms),
  );
  calls.tokens.push(...timings.completionTokens);
  calls.wallMs += timings.wallMs;
}

/** Requests served between two readings, without the readings themselves. */
function served(before: ObjectRequests, after: ObjectRequests): { policy: number; shards: number } {
  const delta = requestsBetween(before, after);
  const net = (c: { total: number; by_method: Record<string, number> }) =>
    c.total - (c.by_method.requestCounts ?? 0);
  return { policy: net(delta.policy), shards: delta.shards.reduce((n, s) => n + net(s), 0) };
}

/** Runs `count` conversations at `inFlight` on one path, topics from `firstTopic`, into `calls`. */
async function runPath(
  plan: ServingPlan,
  path: PathName,
  shape: { count: number; inFlight: number; firstTopic: number; countRequests: boolean },
  calls: PathCalls,
): Promise<void> {
  const rollouts =
    path === "gateway"
      ? await createExternalRollouts(plan.workerUrl, shape.count, {
          max_tokens_per_call: plan.maxTokens,
        })
      : [];
  const endpointFor = (i: number) =>
    path === "gateway"
      ? rollouts[i]!.endpoint
      : servingEndpoint(
          plan.workerUrl,
          plan.apiKey,
          `${plan.runTag}-${shape.inFlight}-${shape.firstTopic + i}`,
        );
  const before = shape.countRequests ? await readObjectRequests(plan.workerUrl) : null;
  const timings = await runConversations(endpointFor, {
    conversations: shape.count,
    concurrency: shape.inFlight,
    turns: plan.turns,
    maxTokens: plan.maxTokens,
    firstTopic: shape.firstTopic,
    // Same prompt, same answer on both paths (the simulator seeds by request otherwise).
    seed: SEED,
  });
  if (before) {
    const requests = served(before, await readObjectRequests(plan.workerUrl));
    calls.policyRequests += requests.policy;
    calls.shardRequests += requests.shards;
  }
  addTimings(calls, timings);
  if (rollouts.length > 0)
    calls.recorded += (await finishAndReadCalls(plan.workerUrl, rollouts)).callMs.length;
}

/** One sequential repeat: `plan.pairs` conversations on each path, alternated pair by pair. */
async function sequentialRepeat(plan: ServingPlan, repeat: number, firstTopic: number) {
  const result = { gateway: emptyCalls(), serving: emptyCalls() };
  const sameTokens = { equal: 0, compared: 0 };
  for (let pair = 0; pair < plan.pairs; pair++) {
    const order: PathName[] =
      (repeat + pair) % 2 === 0 ? ["gateway", "serving"] : ["serving", "gateway"];
    const tokensBefore = {
      gateway: result.gateway.tokens.length,
      serving: result.serving.tokens.length,
    };
    for (const path of order)
      await runPath(
        plan,
        path,
        { count: 1, inFlight: 1, firstTopic: firstTopic + pair, countRequests: false },
        result[path],
      );
    const g = result.gateway.tokens.slice(tokensBefore.gateway);
    const s = result.serving.tokens.slice(tokensBefore.serving);
    sameTokens.compared += g.length;
    sameTokens.equal += g.filter((n, i) => n === s[i]).length;
  }
  return { result, sameTokens };
}

/** Runs the arm: a short warm-up, the sequential repeats, then the concurrent rounds. */
export async function runServingArm(plan: ServingPlan): Promise<ServingResults> {
  // Warm-up: compile the serving route's code paths and open the application's object.
  for (const path of ["gateway", "serving"] as const)
    await runPath(
      plan,
      path,
      { count: 2, inFlight: 2, firstTopic: 95_000, countRequests: false },
      emptyCalls(),
    );
  const results: ServingResults = {
    sequential: [],
    concurrent: [],
    sameTokens: { equal: 0, compared: 0 },
  };
  for (let repeat = 0; repeat < plan.repeats; repeat++) {
    const { result, sameTokens } = await sequentialRepeat(
      plan,
      repeat,
      20_000 + repeat * plan.pairs,
    );
    results.sequential.push(result);
    results.sameTokens.equal += sameTokens.equal;
    results.sameTokens.compared += sameTokens.compared;
  }
  for (let round = 0; round < plan.rounds; round++) {
    const result = { gateway: emptyCalls(), serving: emptyCalls() };
    const order: PathName[] = round % 2 === 0 ? ["serving", "gateway"] : ["gateway", "serving"];
    const firstTopic = 30_000 + round * plan.concurrency;
    for (const path of order)
      await runPath(
        plan,
        path,
        { count: plan.concurrency, inFlight: plan.concurrency, firstTopic, countRequests: true },
        result[path],
      );
    results.concurrent.push(result);
  }
  return results;
}
