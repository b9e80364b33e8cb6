/**
 * @module Engines (the seed's BaseEngineWrapper): one per agent kind, each turning a leased rollout
 * into a trajectory. The registry resolves an agent name to its definition; its `kind` picks here.
 */
import type { AgentDefinition } from "../../sdk/agent-registry";
import { engineRegistry } from "../../sdk/engine-wrapper";
import { customEngineAttempt } from "./custom-engine";
import { runAttempts } from "./attempt-runner";
import type { AgentEngine, EngineRun } from "./engine-types";
import { functionAttempt } from "./function-engine";
import { litAgentAttempt } from "./lit-agent-engine";
import { StepwiseEngine } from "./stepwise/stepwise-engine";
import { workflowAttempt } from "./workflow-engine";

/**
 * The engine for `definition`'s kind, bound to the leased rollout `run`; a stepwise agent whose
 * `engine` names a registered user engine runs that engine as attempts. Undefined when the agent
 * names an engine this deployment has not registered.
 */
export function createEngine(definition: AgentDefinition, run: EngineRun): AgentEngine | undefined {
  switch (definition.kind) {
    case "stepwise": {
      const name = definition.engine ?? "stepwise";
      if (name === "stepwise") return new StepwiseEngine(definition, run);
      const Engine = engineRegistry.get(name);
      if (!Engine) return undefined;
      return {
        kind: "stepwise",
        generateTrajectory: (task, stream) =>
          runAttempts(run, task, customEngineAttempt(definition, name, Engine), stream),
      };
    }
    case "function":
      return {
        kind: "function",
        generateTrajectory: (task, stream) =>
          runAttempts(run, task, functionAttempt(definition), stream),
      };
    case "lit":
      return {
        kind: "lit",
        generateTrajectory: (task, stream) =>
          runAttempts(run, task, litAgentAttempt(definition), stream),
      };
    case "workflow":
      return {
        kind: "workflow",
        generateTrajectory: (task, stream) =>
          runAttempts(run, task, workflowAttempt(definition), stream),
      };
  }
}
