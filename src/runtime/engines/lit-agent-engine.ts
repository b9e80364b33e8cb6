/** @module The LitAgent engine: a LitAgent class run as attempts, by the rollout's mode. */
import type { LitAgentDefinition, NamedResources } from "../../sdk/lit-agent";
import type { ResourceSpecs } from "../../sdk/resources";
import { rewardFromResult } from "./rollout-result";
import type { AttemptAgent } from "./run-attempt";

/** One attempt builds a fresh agent and calls `trainingRollout` (mode `train`) or `validationRollout` (mode `val`). */
export function litAgentAttempt(definition: LitAgentDefinition): AttemptAgent {
  return {
    resources: definition.resources,
    async run(scope) {
      const agent = new definition.agentClass();
      const task = definition.task(scope.task);
      const resources = Object.freeze({
        llm: scope.llm,
        artifacts: scope.artifacts,
        ...scope.resources,
      }) as NamedResources<ResourceSpecs>;
      const method = scope.rollout.mode === "train" ? "trainingRollout" : "validationRollout";
      const result = await agent[method](task, resources, scope.rollout);
      return {
        reward: rewardFromResult(result, scope.spans, `${definition.agentClass.name}.${method}`),
      };
    },
  };
}
