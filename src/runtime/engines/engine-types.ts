/**
 * @module What an engine is (the seed's BaseEngineWrapper) and what it is given: the types every
 * engine shares, apart from `createEngine`, so engines never import the module that picks them.
 */
import type { AgentTask } from "../../schemas/agent-task";
import type { Step } from "../../schemas/step";
import type { AgentKind } from "../../sdk/agent-registry";
import type { DriverDeps, DriveOutcome } from "./driver-deps";
import type { Lease, ResumeState, SessionHandle } from "../session";

/** A leased rollout, as the driver hands it to an engine. */
export interface EngineRun {
  deps: DriverDeps;
  session: SessionHandle;
  lease: Lease;
  resume: ResumeState;
}

/** Progress an engine reports while it runs (the seed's stream queue). */
export type EngineEvent =
  | { type: "step"; step: Step }
  | { type: "attempt_started"; attempt: number }
  | { type: "attempt_ended"; attempt: number; outcome: string; error: string | null };

/** Receives an engine's progress events; engines await it, so an event is delivered before the next. */
export type EngineStream = (event: EngineEvent) => void | Promise<void>;

/**
 * Generates (or continues) the trajectory of one leased rollout and ends it, hands it off, or
 * reports the lease lost. Trajectories live in the rollout's session, so the result is how this
 * invocation's part ended; `GET /v1/rollouts/:id` reads the trajectory.
 */
export interface AgentEngine {
  readonly kind: AgentKind;
  generateTrajectory(task: AgentTask, stream?: EngineStream): Promise<DriveOutcome>;
}
