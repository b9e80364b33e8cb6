/** @module An agent and environment rebuilt from the committed steps, ready for the next step. */
import type { JsonObject, JsonValue } from "../../../schemas/json";
import type { Step } from "../../../schemas/step";
import type { StepwiseAgentDefinition } from "../../../sdk/agent-registry";
import type { BaseAgent } from "../../../sdk/base-agent";
import type { BaseEnv, EnvClass } from "../../../sdk/base-env";
import { type ModelResponse, modelResponseFrom } from "../../../sdk/model-response";
import type { CallCounters, ResumeState } from "../../session";
import { callUserCode } from "../user-code";
import { callEnv } from "./env-lock";

/** What the environment last returned, to be fed to the agent at the start of the next step. */
export interface EnvFeedback {
  observation: JsonValue;
  reward: number;
  done: boolean;
  info: JsonObject;
}

/** A live episode: the agent, the env, the steps so far and the token budget used. */
export interface Episode {
  agent: BaseAgent;
  env: BaseEnv;
  /** The registered env class: its `isMultithreadSafe()` decides whether env calls are serialised (env-lock.ts). */
  envClass: Pick<EnvClass, "isMultithreadSafe">;
  steps: Step[];
  pending: EnvFeedback;
  /** Completion tokens used, the last context's size and the last call's replica (the next call sticks to it). */
  counters: CallCounters;
}

type CallSummary = ResumeState["calls"][number];

/** What a step whose call is not found replays as: an empty reply. */
const NO_REPLY = {
  response_message: { role: "assistant" as const, content: "" },
  finish_reason: null,
};

function responseFromCall(call: CallSummary | undefined): ModelResponse {
  return modelResponseFrom(call ?? NO_REPLY);
}

/**
 * Builds the agent and env for a rollout and brings them to the state after its last committed
 * step: the agent by replaying recorded observations and model responses (no model calls), the
 * env by `restore(snapshot)` when it has one, else by replaying the recorded actions.
 */
export async function rebuildEpisode(
  definition: StepwiseAgentDefinition,
  resume: ResumeState,
): Promise<Episode> {
  const task = resume.spec.task as unknown as JsonValue;
  const env = await callEnv(definition.envClass, "envClass.fromDict", () =>
    definition.envClass.fromDict({ ...definition.envArgs, task }),
  );
  const agent = await callUserCode(
    "agent",
    "agent constructor",
    () => new definition.agentClass(definition.agentArgs),
  );
  await callUserCode("agent", "agent.reset", () => agent.reset());
  const [observation, info] = await callEnv(definition.envClass, "env.reset", () => env.reset());
  let pending: EnvFeedback = { observation, reward: 0, done: false, info };
  const callsById = new Map(resume.calls.map((call) => [call.call_id, call]));
  const steps: Step[] = [];
  for (const { step } of resume.steps) {
    const feedback = pending;
    await callUserCode("agent", "agent.updateFromEnv", () =>
      agent.updateFromEnv(feedback.observation, feedback.reward, feedback.done, feedback.info),
    );
    const response = responseFromCall(callsById.get(step.llm_call_ids[0] ?? ""));
    await callUserCode("agent", "agent.updateFromModel", () => agent.updateFromModel(response));
    // The recorded action, not the replayed one: the env must see exactly what it saw before.
    if (!env.restore)
      await callEnv(definition.envClass, "env.step (replay)", () => env.step(step.action));
    pending = {
      observation: step.next_observation,
      reward: step.reward,
      done: step.done,
      info: step.info,
    };
    steps.push(step);
  }
  const lastSnapshot = resume.steps.at(-1)?.envSnapshot ?? null;
  if (env.restore && lastSnapshot !== null)
    await callEnv(definition.envClass, "env.restore", () => env.restore!(lastSnapshot));
  return {
    agent,
    env,
    envClass: definition.envClass,
    steps,
    pending,
    counters: {
      completion_tokens: resume.completion_tokens,
      last_context_tokens: resume.last_context_tokens,
      last_context_messages: resume.last_context_messages,
      last_replica: resume.last_replica,
      oldest_policy_version: resume.oldest_policy_version ?? null,
    },
  };
}
