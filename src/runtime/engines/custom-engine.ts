/** @module User engines (registered with `registerEngine`) run as attempts, their stream kept as the attempt's spans. */
import type { JsonObject, JsonValue } from "../../schemas/json";
import type { StepwiseAgentDefinition } from "../../sdk/agent-registry";
import { AgentContractError } from "../../sdk/contract-error";
import type { EngineClass, EngineStreamEvent, EngineTrajectory } from "../../sdk/engine-wrapper";
import { callEnv } from "./stepwise/env-lock";
import type { AttemptAgent, AttemptScope, AttemptSuccess } from "./run-attempt";
import { callUserCode } from "./user-code";

/** The annotation name a streamed step is kept under (and the SSE event it becomes). */
export const STEP_EVENT = "step";

function finiteReward(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** What `generateTrajectory` returned, as an attempt's outcome; a non-finite reward is a contract error. */
function outcomeOf(
  result: EngineTrajectory,
  streamed: number | null,
  engine: string,
): AttemptSuccess {
  const returned = typeof result === "object" && result !== null ? result : { reward: result };
  if (
    returned.reward !== undefined &&
    returned.reward !== null &&
    finiteReward(returned.reward) === null
  ) {
    throw new AgentContractError(
      `engine "${engine}" returned the reward ${String(returned.reward)}; a reward must be a finite number`,
    );
  }
  return {
    reward: returned.reward ?? streamed,
    ...(returned.messages ? { messages: returned.messages } : {}),
  };
}

/**
 * One attempt of a stepwise-style agent whose `engine` names a user engine: fresh env (`fromDict`)
 * and agent, a new engine instance over them, `generateTrajectory(task, stream)`. Each streamed
 * event is kept as an annotation span of the attempt (a step as `step`), which the session also
 * sends on the rollout's SSE stream. The reward is the returned one, else the sum of streamed step
 * rewards.
 */
export function customEngineAttempt(
  definition: StepwiseAgentDefinition,
  engineName: string,
  Engine: EngineClass,
): AttemptAgent {
  return {
    resources: {},
    async run(scope: AttemptScope): Promise<AttemptSuccess> {
      const task = scope.task as unknown as JsonValue;
      const env = await callEnv(definition.envClass, "envClass.fromDict", () =>
        definition.envClass.fromDict({ ...definition.envArgs, task }),
      );
      const agent = await callUserCode(
        "agent",
        "agent constructor",
        () => new definition.agentClass(definition.agentArgs),
      );
      let streamed: number | null = null;
      const stream = (event: EngineStreamEvent) => {
        const { type, ...rest } = event as { type: unknown } & JsonObject;
        if (typeof type !== "string" || type === "")
          throw new AgentContractError(`engine "${engineName}" streamed an event without a type`);
        if (type === STEP_EVENT) {
          const reward = finiteReward((rest.step as JsonObject | undefined)?.reward);
          if (reward !== null) streamed = (streamed ?? 0) + reward;
        }
        scope.spans.append({ kind: "annotation", name: type, value: rest as JsonObject });
      };
      const engine = new Engine({
        agent,
        env,
        llm: scope.llm,
        config: scope.spec.config,
        rollout: scope.rollout,
        signal: scope.signal,
        heartbeat: scope.heartbeat,
      });
      try {
        return outcomeOf(await engine.generateTrajectory(scope.task, stream), streamed, engineName);
      } finally {
        await callEnv(definition.envClass, "env.close", () => env.close()).catch(() => undefined);
      }
    },
  };
}
