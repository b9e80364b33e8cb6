/**
 * @module The in-process arm of `bench:routing`: the `vllm` backend's router in this process, as
 * `isolates` independent instances standing in for a deployment's isolates. Every call lands on
 * one of them at random, as a request lands on whichever isolate the platform picks, so each
 * router sees only its share of the traffic (its own in-flight counts, pace and remembered
 * rollouts); the rollout's last replica travels with the call as the session's `replicaHint` does.
 */
import { createVllmBackend } from "../../src/gateway/backends";
import type { ModelBackend } from "../../src/gateway/model-backend";
import type { RoutingPolicyName } from "../../src/schemas/backend-config";
import type { RoutingCaller } from "./routing-workload";

/** A small seeded generator (mulberry32): the same isolate draws for the same seed, run after run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Options of `inProcessCaller`. */
export interface InProcessOptions {
  urls: string[];
  policy: RoutingPolicyName;
  /** `sticky_least_loaded`'s bound. */
  bound: number;
  /** Router instances calls are spread over. */
  isolates: number;
  /** Seeds which isolate each call lands on. */
  seed: number;
}

/** A caller that routes each call through one of `isolates` routers picked at random. */
export function inProcessCaller(options: InProcessOptions): RoutingCaller {
  const backends: ModelBackend[] = Array.from({ length: options.isolates }, () =>
    createVllmBackend({
      replicas: options.urls,
      routing: { policy: options.policy, bound: options.bound },
    }),
  );
  const random = seededRandom(options.seed);
  return {
    async call(rolloutId, body, hint) {
      const backend = backends[Math.floor(random() * backends.length)]!;
      const reply = await backend.request("/chat/completions", body, {
        rolloutId,
        replicaHint: hint,
      });
      const answer = reply.body as {
        choices: Array<{ message: { content: string } }>;
        metrics?: { time_to_first_token_ms?: number };
      };
      return {
        content: answer.choices[0]!.message.content,
        replica: reply.replica,
        ttftMs: answer.metrics?.time_to_first_token_ms ?? null,
      };
    },
    maxReplicaLoad() {
      const load = new Map<string, number>();
      for (const backend of backends)
        for (const replica of backend.health?.() ?? [])
          load.set(replica.replica, (load.get(replica.replica) ?? 0) + replica.in_flight);
      return Math.max(0, ...load.values());
    },
  };
}
