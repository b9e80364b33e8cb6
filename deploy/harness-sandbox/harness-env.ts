/** @module The bindings of the edge-rollout-harness Worker (wrangler.containers.toml), and its settings parsed. */
import type { ClaimedRollout } from "../../src/schemas/runner-claims";

/**
 * The RPC surfaces the two objects call on each other, declared here rather than imported from
 * their classes, so the classes depend on this module and not on each other through it.
 */
export interface SandboxRpc extends Rpc.DurableObjectBranded {
  /** Starts the attempt's container (harness-sandbox.ts). */
  begin(claim: ClaimedRollout): Promise<void>;
}
/** The launcher's side (start-harness-sandbox.ts): a sandbox tells it its attempt ended. */
export interface LauncherRpc extends Rpc.DurableObjectBranded {
  ended(name: string): Promise<void>;
  /** Starts claiming (the Worker's fetch and cron call it). */
  wake(): Promise<unknown>;
}

/** What wrangler.containers.toml binds; `API_TOKEN` is a secret (`wrangler secret put API_TOKEN`). */
export interface HarnessEnv {
  HARNESS_SANDBOX: DurableObjectNamespace<SandboxRpc>;
  HARNESS_LAUNCHER: DurableObjectNamespace<LauncherRpc>;
  /** The edge-rollout Worker (service binding): its API and every attempt's gateway. */
  EDGE_ROLLOUT: Fetcher;
  HARNESS_TASKS: R2Bucket;
  API_TOKEN: string;
  HARNESS_AGENTS: string;
  MAX_SANDBOXES: string;
  TASK_SOURCE: string;
  LEASE_MS: string;
}

/** The settings, validated eagerly with the variable named (a bad deploy fails its first alarm loudly). */
export interface HarnessSettings {
  agents: string[];
  maxSandboxes: number;
  taskSource: "baked" | "r2";
  leaseMs: number;
}

/** Parses the `[vars]` of wrangler.containers.toml. */
export function harnessSettings(env: HarnessEnv): HarnessSettings {
  const agents = env.HARNESS_AGENTS.split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  if (agents.length === 0) throw new Error("HARNESS_AGENTS must name at least one harness");
  const maxSandboxes = Number(env.MAX_SANDBOXES);
  if (!Number.isInteger(maxSandboxes) || maxSandboxes < 1)
    throw new Error(`MAX_SANDBOXES must be an integer >= 1, got ${env.MAX_SANDBOXES}`);
  if (env.TASK_SOURCE !== "baked" && env.TASK_SOURCE !== "r2")
    throw new Error(`TASK_SOURCE must be "baked" or "r2", got ${env.TASK_SOURCE}`);
  const leaseMs = Number(env.LEASE_MS);
  if (!Number.isInteger(leaseMs) || leaseMs < 2_000 || leaseMs > 600_000)
    throw new Error(`LEASE_MS must be an integer 2000..600000, got ${env.LEASE_MS}`);
  return { agents, maxSandboxes, taskSource: env.TASK_SOURCE, leaseMs };
}
