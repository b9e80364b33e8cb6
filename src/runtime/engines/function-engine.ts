/** @module The function engine: a `rollout(...)` / `defineRollout(...)` agent run as attempts. */
import type { FunctionAgentDefinition, RolloutContext } from "../../sdk/function-agent";
import type { ResourceSpecs } from "../../sdk/resources";
import { rewardFromResult } from "./rollout-result";
import type { AttemptAgent } from "./run-attempt";

/** One attempt calls the function with its context: the base fields plus each declared resource. */
export function functionAttempt(definition: FunctionAgentDefinition): AttemptAgent {
  return {
    resources: definition.resources,
    async run(scope) {
      // Registration refused resource keys that would hide a base field, so the spread cannot.
      const context = Object.freeze({
        task: scope.task,
        llm: scope.llm,
        rollout: scope.rollout,
        signal: scope.signal,
        artifacts: scope.artifacts,
        heartbeat: scope.heartbeat,
        ...scope.resources,
      });
      const result = await definition.run(context as RolloutContext<ResourceSpecs>);
      return {
        reward: rewardFromResult(result, scope.spans, `rollout function "${definition.name}"`),
      };
    },
  };
}
