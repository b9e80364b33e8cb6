/** @module What the overview page and `GET /v1/backends` read: policy, feed, backends, recent batches. */
import { objects } from "../../src/runtime/objects";
import {
  backendRegistry,
  defaultBackendDeps,
  resolveBackend,
  vllmServerConfig,
} from "../../src/gateway/backends";
import type { PolicyView } from "../../src/schemas/policy";
import type { FeedStats } from "../../src/schemas/feed";
import type { AppEnv } from "../env";
import { listBatches, type ListedBatch } from "./batch-views";

/** `GET /v1/backends`: the policy's backend and each replica's health and in-flight calls as this isolate saw them. */
export interface BackendsView {
  backend: string;
  /** Health is learned per Worker isolate from its own calls and probes; another isolate may see otherwise. */
  observed_by: "this isolate";
  replicas: Array<{ replica: string; healthy: boolean; in_flight: number }>;
}

/** The backend the gateway resolves for `policy` (the same per-isolate instance, so its replica state is the live one). */
export function backendsView(env: AppEnv, policy: Pick<PolicyView, "backend">): BackendsView {
  const backend = resolveBackend(
    backendRegistry,
    policy.backend ?? vllmServerConfig(env.LLM_BASE_URL, env.LLM_API_KEY),
    defaultBackendDeps,
  );
  return { backend: backend.name, observed_by: "this isolate", replicas: backend.health?.() ?? [] };
}

/** Everything the overview shows. */
export interface OverviewView {
  policy: PolicyView;
  feed: FeedStats;
  backends: BackendsView;
  batches: ListedBatch[];
}

/** Reads the overview's parts in parallel. */
export async function overviewView(env: AppEnv, recent = 10): Promise<OverviewView> {
  const [policy, feed, batches] = await Promise.all([
    objects(env).policy().snapshot(),
    objects(env).feed().stats(),
    listBatches(env, { limit: String(recent) }),
  ]);
  return { policy, feed, backends: backendsView(env, policy), batches };
}
