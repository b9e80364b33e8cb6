/** @module How a session presents itself: the rollout view and its SSE events. */
import { outcomeOf } from "../../../schemas/member-outcome";
import type { LlmCall } from "../../../schemas/llm-call";
import type { RolloutSpec, RolloutView } from "../../../schemas/rollout-api";
import type { Step } from "../../../schemas/step";
import type { ChatMessage } from "../../../schemas/chat";
import type { Span } from "../../../schemas/span";
import type { ForkRecord } from "../../../schemas/rollout-tree";
import type { SseEvent } from "./event-hub";
import type { SessionState } from "./session-state";
import { attemptSteps, withTrainingExclusion } from "./attempt-view";
import { toolcallReward, withMcReturns } from "./trajectory-returns";
import { onlineFieldsOf } from "./online-fields";

/**
 * Steps are stored without their prompt (the LlmCall already holds it, and a conversation copied
 * into every step would grow quadratically); the view puts each step's prompt back from its call.
 */
function withChatCompletions(step: Step, callsById: Map<string, LlmCall>): Step {
  const firstCall = step.llm_call_ids
    .map((id) => callsById.get(id))
    .find((call) => call !== undefined);
  const messages = firstCall?.request.messages;
  return Array.isArray(messages)
    ? { ...step, chat_completions: messages as Step["chat_completions"] }
    : step;
}

/**
 * The versions of named resources the final attempt used, keyed by resource name, read off the
 * `resources` annotation each attempt records (keyed there by the agent's own context key, with the
 * stored names in its `resource_names` attribute).
 */
function resourceVersions(spans: Span[], finalAttempt: number | null): Record<string, string> {
  const recorded = spans.filter((span) => span.kind === "annotation" && span.name === "resources");
  const span =
    [...recorded]
      .reverse()
      .find((s) => finalAttempt === null || s.attributes.attempt === finalAttempt) ??
    recorded.at(-1);
  if (!span || typeof span.value !== "object" || span.value === null || Array.isArray(span.value))
    return {};
  const names = (span.attributes.resource_names ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(span.value).flatMap(([key, version]) =>
      typeof version === "string"
        ? [[typeof names[key] === "string" ? names[key] : key, version]]
        : [],
    ),
  );
}

/** Assembles `GET /v1/rollouts/:id` from the stored spec, state, steps and calls. */
export function buildRolloutView(
  spec: RolloutSpec,
  state: SessionState,
  records: {
    steps: Step[];
    calls: LlmCall[];
    spans: Span[];
    finalMessages: ChatMessage[] | null;
    forks?: ForkRecord[];
  },
): RolloutView {
  const calls = records.calls.map((call) => withTrainingExclusion(call, state));
  // Attempt agents commit no steps; their trajectory is read off the final attempt's calls.
  const steps =
    records.steps.length === 0 && state.final_attempt !== null
      ? attemptSteps(spec.rollout_id, calls, state)
      : records.steps;
  const callsById = new Map(calls.map((call) => [call.call_id, call]));
  const returns = withMcReturns(steps, spec.config.gamma);
  return {
    rollout_id: spec.rollout_id,
    agent: spec.agent,
    status: state.status,
    termination_reason: state.termination_reason,
    outcome:
      state.outcome ??
      (state.termination_reason === null ? null : outcomeOf(state.termination_reason)),
    superseded: state.superseded,
    reward: state.reward,
    error: state.error,
    created_at: spec.created_at,
    updated_at: state.updated_at,
    finished_at: state.finished_at,
    config: spec.config,
    group: spec.group,
    tree: spec.tree ?? null,
    forks: records.forks ?? [],
    ...(spec.online ? { online: onlineFieldsOf(spec.online, records.spans) } : {}),
    usage: {
      prompt_tokens: state.prompt_tokens,
      completion_tokens: state.completion_tokens,
      llm_calls: state.llm_calls,
    },
    trajectory: {
      schema_version: 1,
      task: spec.task,
      steps: returns.map((step) => withChatCompletions(step, callsById)),
      reward: state.reward,
      // See trajectory-returns.ts: env info / reward spans named toolcall_reward; the result reward is the rollout's.
      toolcall_reward: toolcallReward(steps, records.spans),
      res_reward: state.reward ?? 0,
      prompt_id: spec.task.prompt_id,
      data_id: spec.task.task_id,
      training_id: "",
      epoch_id: 0,
      iteration_id: spec.task.iteration,
      sample_id: spec.task.sample_id,
      trajectory_id: spec.rollout_id,
      application_id: spec.agent,
      termination_reason: state.termination_reason,
    },
    llm_calls: calls,
    spans: records.spans,
    resource_versions: resourceVersions(records.spans, state.final_attempt),
    final_messages: records.finalMessages,
    attempts: state.attempt,
    final_attempt: state.final_attempt,
    final_runner_id: state.final_runner_id,
    runner_lease:
      spec.runner !== null && state.lease
        ? {
            runner_id: state.lease.driver_id,
            attempt: state.attempt,
            expires_at: state.lease.expires_at,
          }
        : null,
    publication: state.publication,
  };
}

/** The event sent when a step is committed: the step and a token summary of its calls. */
export function stepEvent(step: Step, calls: LlmCall[]): SseEvent {
  return {
    id: String(step.step_index),
    event: "step",
    data: {
      step,
      llm_calls: calls.map((call) => ({
        call_id: call.call_id,
        prompt_tokens: call.prompt_token_ids.length,
        completion_tokens: call.completion_token_ids.length,
        finish_reason: call.finish_reason,
        latency_ms: call.latency_ms,
      })),
    },
  };
}

/**
 * The event sent when a span is added: `attempt` for an attempt starting or ending, `step` for a
 * step a user engine streamed, `span` for any other. No id: Last-Event-ID counts committed steps.
 */
export function spanEvent(span: Span): SseEvent {
  if (span.kind === "annotation" && (span.name === "attempt" || span.name === "step"))
    return {
      event: span.name,
      data: {
        ...(span.value as object),
        attempt: span.attributes.attempt ?? null,
        sequence_id: span.sequence_id,
      },
    };
  return { event: "span", data: span };
}

/** The last event of a stream: how the rollout ended. */
export function endEvent(state: SessionState): SseEvent {
  return {
    id: "end",
    event: "end",
    data: {
      status: state.status,
      termination_reason: state.termination_reason,
      reward: state.reward,
      error: state.error,
      steps: state.step_count,
    },
  };
}
