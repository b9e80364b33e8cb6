/**
 * @module What the stateless driver is given and hands on to an engine, and how one drive of a
 * rollout ends. Beside the engines that take it, so they need nothing of the driver: the driver
 * (src/runtime/driver/) imports the engines, never the reverse.
 */
import type { ModelClient } from "../../gateway/model-client";
import type { BlobStorePort, Clock } from "../../ports";
import type { TerminationReason } from "../../schemas/termination";
import type { AgentDefinition } from "../../sdk/agent-registry";
import type { SessionLocator } from "../session";
import type { InWorkerGateway } from "./llm-resource";
import type { ResourcePort } from "./named-resources";

/** What attempt engines (function, LitAgent, workflow agents) need to run agent code inside the Worker. */
export interface InWorkerDeps {
  /** The Worker's own gateway routes, reached in-process. */
  gateway: InWorkerGateway;
  /** The latest versions of named resources (in a Worker: from each rollout's admission shard). */
  resources: ResourcePort;
  /** Where `ctx.artifacts` writes (the TRAJECTORIES bucket). */
  artifacts: BlobStorePort;
}

/** What the driver needs; all of it is injected so the loop runs the same in tests and in Workers. */
export interface DriverDeps {
  sessions: SessionLocator;
  resolveAgent: (name: string) => AgentDefinition | undefined;
  model: ModelClient;
  now: Clock;
  /** Identifies this invocation in leases. */
  driverId: string;
  newId: () => string;
  inWorker: InWorkerDeps;
}

/** How one `driveRollout` call ended. */
export type DriveOutcome =
  | { result: "finished"; steps: number; termination_reason: TerminationReason; attempts?: number }
  | { result: "handed_off"; steps: number }
  | { result: "skipped"; reason: string }
  | { result: "lost_lease"; steps: number; reason: string };
