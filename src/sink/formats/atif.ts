/**
 * @module Exporting a rollout as an ATIF v1.7 trajectory (Harbor's Agent Trajectory Interchange
 * Format; the spec and its rules are in `atif-schema.ts`).
 *
 * The conversation is rebuilt from the recorded LLM calls (each call's request messages and
 * response), so external rollouts, which have calls but no steps, export the same way as driven
 * ones; the final messages an external agent reported add the turns after its last call, and are
 * the whole conversation when there are no calls. Mapping:
 *
 * | rollout                                   | ATIF                                                        |
 * |-------------------------------------------|-------------------------------------------------------------|
 * | rollout_id                                | `session_id`, `trajectory_id`                               |
 * | agent name, model, first call's tools     | `agent.name`, `agent.model_name`, `agent.tool_definitions`  |
 * | system / developer, user messages         | `source: "system"` / `"user"` steps                         |
 * | a call's response message                 | `source: "agent"` step, `llm_call_count: 1`, `timestamp` = call start |
 * | `<think>…</think>` or `reasoning_content` | `reasoning_content`                                         |
 * | tool calls                                | `tool_calls[]` {tool_call_id, function_name, arguments}     |
 * | tool messages                             | `observation.results[]` {source_call_id, content} on the calling step |
 * | usage, token ids, logprobs                | `metrics` {prompt_tokens, completion_tokens, prompt_token_ids, completion_token_ids, logprobs} |
 * | call id, finish reason, policy versions, step reward | the agent step's `extra`                         |
 * | reward, termination reason, status, error | root `extra`                                                |
 */
import type { JsonObject, JsonValue } from "../../schemas/json";
import type { LlmCall } from "../../schemas/llm-call";
import type { RolloutView } from "../../schemas/rollout-api";
import type { Step } from "../../schemas/step";
import { ATIF_SCHEMA_VERSION } from "./atif-schema";
import { type AgentCallFields, AtifStepWriter, compact, isoTime } from "./atif-steps";

/** `agent.version` is required by ATIF; rollouts do not version their agents yet. */
const AGENT_VERSION = "unversioned";

function stringField(call: LlmCall | undefined, field: string): string | undefined {
  const value = call?.request[field];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The tools the first call offered, as OpenAI function definitions (ATIF's `tool_definitions`). */
function toolDefinitions(call: LlmCall | undefined): JsonObject[] | undefined {
  const tools = call?.request.tools;
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  return tools.filter(
    (tool): tool is JsonObject => typeof tool === "object" && tool !== null && !Array.isArray(tool),
  );
}

/** Metrics of one call: token counts, the engine's ids and (when recorded) one logprob per completion token. */
function callMetrics(call: LlmCall): JsonObject {
  return compact({
    prompt_tokens: call.usage.prompt_tokens,
    completion_tokens: call.usage.completion_tokens,
    prompt_token_ids: call.prompt_token_ids,
    completion_token_ids: call.completion_token_ids,
    logprobs: call.logprobs.length > 0 ? call.logprobs : undefined,
    extra: {
      logprobs_mode: call.logprobs_mode,
      latency_ms: call.latency_ms,
      attempts: call.attempts,
      backend: call.backend,
      replica: call.replica,
    },
  });
}

/** What ties an agent step back to the rollout: its call, the step it ran in, and that step's reward. */
function callExtra(call: LlmCall, step: Step | undefined): JsonObject {
  return compact({
    call_id: call.call_id,
    rollout_step_id: call.step_id,
    finish_reason: call.finish_reason,
    trainable: call.trainable,
    policy_version_start: call.policy_version_start,
    policy_version_end: call.policy_version_end,
    step_reward: step?.reward,
    step_done: step?.done,
  });
}

function agentFields(
  call: LlmCall,
  step: Step | undefined,
  defaultModel: string | undefined,
): AgentCallFields {
  return {
    timestamp: isoTime(call.created_at),
    model_name: stringField(call, "model") ?? defaultModel,
    metrics: callMetrics(call),
    llm_call_count: 1,
    extra: callExtra(call, step),
  };
}

/**
 * What the env returned after the last step, when no later message carries it (a driven rollout
 * stopped by a limit right after a tool call): kept in the root `extra`, since no call saw it.
 */
function finalObservation(view: RolloutView): JsonValue | undefined {
  if (view.final_messages) return undefined;
  const last = view.trajectory.steps.at(-1)?.next_observation;
  return last === null || last === undefined || last === "" ? undefined : last;
}

/**
 * The rollout as an ATIF v1.7 document; it passes `validateAtif`.
 *
 * @example
 * await blobs.put(rolloutAtifKey(view.rollout_id), JSON.stringify(toAtif(view)), "application/json");
 */
export function toAtif(view: RolloutView): JsonObject {
  const calls = view.llm_calls;
  const first = calls[0];
  const model = stringField(first, "model") ?? view.config.model ?? undefined;
  const stepsById = new Map(view.trajectory.steps.map((step) => [step.step_id, step]));
  const writer = new AtifStepWriter();
  for (const call of calls)
    writer.addCall(call, agentFields(call, stepsById.get(call.step_id ?? ""), model));
  if (view.final_messages) writer.addPrompt(view.final_messages);
  const source = calls.length > 0 ? "llm_calls" : view.final_messages ? "final_messages" : "none";
  return compact({
    schema_version: ATIF_SCHEMA_VERSION,
    session_id: view.rollout_id,
    trajectory_id: view.rollout_id,
    agent: compact({
      name: view.agent,
      version: AGENT_VERSION,
      model_name: model,
      tool_definitions: toolDefinitions(first),
    }),
    steps: writer.steps,
    notes:
      "Exported by edge-rollout from the rollout's recorded LLM calls; token ids and logprobs in step metrics are the inference engine's own.",
    final_metrics: {
      total_prompt_tokens: calls.reduce((sum, call) => sum + call.usage.prompt_tokens, 0),
      total_completion_tokens: calls.reduce((sum, call) => sum + call.usage.completion_tokens, 0),
      total_steps: writer.steps.length,
      extra: {
        llm_calls: calls.length,
        trainable_calls: calls.filter((call) => call.trainable).length,
      },
    },
    extra: compact({
      rollout_id: view.rollout_id,
      reward: view.reward,
      termination_reason: view.termination_reason,
      status: view.status,
      error: view.error,
      task_id: view.trajectory.task.task_id,
      created_at: isoTime(view.created_at),
      finished_at: isoTime(view.finished_at),
      conversation_source: source,
      final_observation: finalObservation(view),
    }),
  });
}
