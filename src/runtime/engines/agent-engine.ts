/**
 * @module Engines (the seed's BaseEngineWrapper): one per agent kind, each turning a leased rollout
 * into a trajectory. The registry resolves an agent name to its definition; its `kind` picks here.
 */
import type { AgentTask } from "../../schemas/agent-task";
import type { Step } from "../../schemas/step";
import type { AgentDefinition, AgentKind } from "../../sdk/agent-registry";
import type { DriverDeps, DriveOutcome } from "../driver/driver-deps";
import type { SessionHandle } from "../session/session-handle";
import type { ResumeState } from "../session/session-results";
import type { Lease } from "../session/session-state";
import { runAttempts } from "./attempt-runner";
import { functionAttempt } from "./function-engine";
import { litAgentAttempt } from "./lit-agent-engine";
import { StepwiseEngine } from "./stepwise-engine";
import { workflowAttempt } from "./workflow-engine";

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

/** Receives an engine's progress events. */
export type EngineStream = (event: EngineEvent) => void;

/**
 * Generates (or continues) the trajectory of one leased rollout and ends it, hands it off, or
 * reports the lease lost. Trajectories live in the rollout's session, so the result is how this
 * invocation's part ended; `GET /v1/rollouts/:id` reads the trajectory.
 */
export interface AgentEngine {
  readonly kind: AgentKind;
  generateTrajectory(task: AgentTask, stream?: EngineStream): Promise<DriveOutcome>;
}

/** The engine for `definition`'s kind, bound to the leased rollout `run`. */
export function createEngine(definition: AgentDefinition, run: EngineRun): AgentEngine {
  switch (definition.kind) {
    case "stepwise":
      return new StepwiseEngine(definition, run);
    case "function":
      return { kind: "function", generateTrajectory: (task, stream) => runAttempts(run, task, functionAttempt(definition), stream) };
    case "lit":
      return { kind: "lit", generateTrajectory: (task, stream) => runAttempts(run, task, litAgentAttempt(definition), stream) };
    case "workflow":
      return { kind: "workflow", generateTrajectory: (task, stream) => runAttempts(run, task, workflowAttempt(definition), stream) };
  }
}
