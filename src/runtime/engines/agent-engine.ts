/**
 * @module Engines (the seed's BaseEngineWrapper): one per agent kind, each turning a leased rollout
 * into a trajectory. The registry resolves an agent name to its definition; its `kind` picks here.
 */
import type { AgentDefinition } from "../../sdk/agent-registry";
import { runAttempts } from "./attempt-runner";
import type { AgentEngine, EngineRun } from "./engine-types";
import { functionAttempt } from "./function-engine";
import { litAgentAttempt } from "./lit-agent-engine";
import { StepwiseEngine } from "./stepwise/stepwise-engine";
import { workflowAttempt } from "./workflow-engine";

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
