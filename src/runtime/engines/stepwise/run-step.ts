/** @module One step of the stepwise loop: env feedback → model call → action → env step. */
import type { OutcomeHint } from "../../../schemas/member-outcome";
import { PolicyError } from "../../../sdk/policy-error";
import {
  describeError,
  LimitExceededError,
  ModelError,
  StaleRolloutError,
  UserCodeError,
} from "../../../errors";
import { staleReason } from "../../../training/staleness";
import { Action } from "../../../schemas/action";
import type { JsonObject, JsonValue } from "../../../schemas/json";
import type { LlmCall } from "../../../schemas/llm-call";
import type { RolloutSpec } from "../../../schemas/rollout-api";
import { leaseTtlMs } from "../../../schemas/rollout-config";
import { Step, stepIdFor } from "../../../schemas/step";
import type { TerminationReason } from "../../../schemas/termination";
import type { Clock } from "../../../ports";
import type { ModelClient } from "../../../gateway/model-client";
import type { ModelResponse } from "../../../sdk/model-response";
import type { StepCommit } from "../../session";
import type { Episode } from "./episode";
import type { StepTimer } from "./step-timer";
import { callLimitsFor } from "../../../gateway/request-shaping";
import { callUserCode, raceSignal } from "../user-code";
import { callEnv } from "./env-lock";
import type { SpanInput } from "../../../schemas/span";
import { runWithSpanSink, type SpanSink } from "../../../sdk/emitter-context";

/**
 * A step either produced something to commit, or ended the rollout. A commit's call carries the
 * version it was admitted under; `released` (never rejecting) is its admission's release, still
 * under way, reporting the version in force when it landed, for the committer to correct.
 */
export type StepOutcome =
  | { kind: "commit"; commit: StepCommit; step: Step; call: LlmCall; released: Promise<number> }
  | {
      kind: "terminate";
      reason: TerminationReason;
      error: string | null;
      outcome?: OutcomeHint;
      reward?: number;
    };

/** What one step needs. `timer` aborts at the step's (or the rollout's) time limit. */
export interface StepContext {
  episode: Episode;
  spec: RolloutSpec;
  model: ModelClient;
  timer: StepTimer;
  now: Clock;
  newId: () => string;
}

function isEnvStepResult(value: unknown): value is [JsonValue, number, boolean, JsonObject] {
  return (
    Array.isArray(value) &&
    value.length === 4 &&
    typeof value[1] === "number" &&
    Number.isFinite(value[1]) &&
    typeof value[2] === "boolean" &&
    typeof value[3] === "object" &&
    value[3] !== null &&
    !Array.isArray(value[3])
  );
}

/** The `info` of the agent's current state, when it recorded one. */
function agentInfo(state: unknown): JsonObject {
  const info = (state as { info?: unknown } | undefined)?.info;
  return typeof info === "object" && info !== null && !Array.isArray(info)
    ? (info as JsonObject)
    : {};
}

/** Runs the step and classifies any failure into a termination reason. Never throws for user or model faults. */
export async function runStep(context: StepContext): Promise<StepOutcome> {
  const { signal } = context.timer;
  // Agent-lightning's emitters work in BaseAgent/BaseEnv code too: what the step's agent and env
  // emit is committed with the step (a step that fails commits nothing, its spans included).
  const spans: SpanInput[] = [];
  const sink: SpanSink = { record: (span) => void spans.push(span), heartbeat: () => undefined };
  try {
    const outcome = await raceSignal(
      runWithSpanSink(sink, () => runStepUnguarded(context)),
      signal,
    );
    return outcome.kind === "commit" && spans.length > 0
      ? { ...outcome, commit: { ...outcome.commit, spans } }
      : outcome;
  } catch (error) {
    const expired = context.timer.expired;
    // A step that did not answer within step_timeout_ms is the server's or the env's failure; a rollout out of time while it ran, the policy's.
    if (expired)
      return {
        kind: "terminate",
        reason: "TIMEOUT",
        error:
          expired === "step"
            ? `step ${context.episode.steps.length} exceeded step_timeout_ms (${context.spec.config.step_timeout_ms})`
            : `rollout_timeout_ms (${context.spec.config.rollout_timeout_ms}) exceeded`,
        outcome: expired === "step" ? "infra" : "policy",
      };
    if (error instanceof UserCodeError) {
      const reason = error.source === "env" ? "ENV_ERROR" : "AGENT_ERROR";
      // User code that says the policy is at fault (a malformed action) ends the rollout scored with its penalty.
      if (error.cause instanceof PolicyError)
        return {
          kind: "terminate",
          reason,
          error: error.message,
          outcome: "policy",
          reward: error.cause.reward,
        };
      return { kind: "terminate", reason, error: error.message };
    }
    if (error instanceof LimitExceededError)
      return { kind: "terminate", reason: error.reason, error: error.message };
    if (error instanceof StaleRolloutError)
      return { kind: "terminate", reason: "STALE", error: error.message };
    if (error instanceof ModelError)
      return { kind: "terminate", reason: "MODEL_ERROR", error: error.message };
    throw error;
  } finally {
    context.timer.dispose();
  }
}

async function runStepUnguarded({
  episode,
  spec,
  model,
  timer,
  now,
  newId,
}: StepContext): Promise<StepOutcome> {
  const { agent, pending } = episode;
  const config = spec.config;
  const stepIndex = episode.steps.length;
  const stepId = stepIdFor(spec.rollout_id, stepIndex);
  const startedAt = now();

  await callUserCode("agent", "agent.updateFromEnv", () =>
    agent.updateFromEnv(pending.observation, pending.reward, pending.done, pending.info),
  );
  const messages = structuredClone(
    await callUserCode("agent", "agent.chatCompletions", () => agent.chatCompletions),
  );
  const tools = await callUserCode("agent", "agent.tools", () => agent.tools);

  const chat = await model.chat(
    { messages, tools, temperature: config.temperature, topP: config.top_p, seed: config.seed },
    {
      rolloutId: spec.rollout_id,
      stepId,
      callId: `${stepId}/call/${newId()}`,
      train: config.mode === "train",
      model: config.model,
      limits: callLimitsFor(config, episode.counters),
      replicaHint: episode.counters.last_replica,
      signal: timer.signal,
      onSyncWait: (waiting) => timer.pause(waiting),
      // The staleness rule at each admission: a rollout the admitted version leaves untrainable
      // ends STALE before its call generates anything.
      onAdmitted: ({ policy_version }) => {
        const stale = staleReason(spec, policy_version, episode.counters.oldest_policy_version);
        if (stale !== null) throw new StaleRolloutError(stale);
      },
      // A driver that dies mid-call leaves its admission for no longer than its lease would live.
      admissionTtlMs: leaseTtlMs(config),
    },
  );
  // The call's release runs while the agent and the environment work, and then while the step is
  // committed (the committer waits for it); a step that fails waits for it here instead.
  try {
    return {
      ...(await finishStep({
        episode,
        stepIndex,
        stepId,
        startedAt,
        now,
        response: chat.response,
        call: chat.call,
      })),
      released: chat.released,
    };
  } catch (error) {
    await chat.released;
    throw error;
  }
}

/** A step whose model call has answered. */
interface AnsweredStep {
  episode: Episode;
  stepIndex: number;
  stepId: string;
  startedAt: number;
  now: () => number;
  response: ModelResponse;
  call: LlmCall;
}

/** The rest of a step after its model call: the agent's action, the env's step, the step record. */
async function finishStep({
  episode,
  stepIndex,
  stepId,
  startedAt,
  now,
  response,
  call,
}: AnsweredStep): Promise<Omit<Extract<StepOutcome, { kind: "commit" }>, "released">> {
  const { agent, env, pending } = episode;
  const rawAction = await callUserCode("agent", "agent.updateFromModel", () =>
    agent.updateFromModel(response),
  );
  const action = Action.safeParse(rawAction);
  if (!action.success) {
    throw new UserCodeError(
      "agent",
      `agent.updateFromModel must return {action: <JSON value>}: ${describeError(action.error)}`,
      action.error,
    );
  }
  // The seed's get_current_state: what the agent recorded about this step; its info rides along with the env's.
  const agentState = await callUserCode("agent", "agent.getCurrentState", () =>
    agent.getCurrentState(),
  );
  const result: unknown = await callEnv(episode.envClass, "env.step", () =>
    env.step(action.data.action),
  );
  if (!isEnvStepResult(result))
    throw new UserCodeError(
      "env",
      "env.step must return [observation, finite reward, done boolean, info object]",
      result,
    );
  const [observation, reward, done, info] = result;
  const snapshot = env.snapshot
    ? await callEnv(episode.envClass, "env.snapshot", () => env.snapshot!())
    : null;

  const step = Step.safeParse({
    schema_version: 1,
    step_id: stepId,
    step_index: stepIndex,
    chat_completions: [],
    thought: response.thought,
    action: action.data.action,
    observation: pending.observation,
    next_observation: observation,
    model_response: response.text,
    // The env's info wins a clash: it is what the environment reported.
    info: { ...agentInfo(agentState), ...info },
    reward,
    done,
    // Set when the trajectory is read (it depends on later rewards): trajectory-returns.ts.
    mc_return: 0,
    llm_call_ids: [call.call_id],
    started_at: startedAt,
    duration_ms: now() - startedAt,
  });
  // The action was validated above, so what fails here is the env's observation or info.
  if (!step.success)
    throw new UserCodeError(
      "env",
      `env.step returned a value that is not JSON: ${describeError(step.error)}`,
      step.error,
    );
  return {
    kind: "commit",
    step: step.data,
    commit: { step: step.data, llm_calls: [call], env_snapshot: snapshot },
    call,
  };
}
