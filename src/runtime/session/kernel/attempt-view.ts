/** @module How the calls of an attempt agent's rollout read: which train, and the steps they make. */
import { messageText } from "../../../schemas/chat";
import type { LlmCall } from "../../../schemas/llm-call";
import { Step } from "../../../schemas/step";
import { thoughtOf } from "../../../sdk/reply-parts";
import type { SessionState } from "./session-state";

/**
 * A call is excluded from training when the rollout reports another attempt's outcome (a retried
 * attempt's calls stay recorded but never reach a sample) or when a grader made it to judge.
 * Rows stored before attempts existed lack both fields and read as `attempt: null`, included.
 */
export function withTrainingExclusion(
  call: LlmCall,
  state: Pick<SessionState, "final_attempt">,
): LlmCall {
  const attempt = call.attempt ?? null;
  const purpose = call.purpose ?? "policy";
  return {
    ...call,
    attempt,
    purpose,
    excluded_from_training:
      purpose === "judge" || (state.final_attempt !== null && attempt !== state.final_attempt),
  };
}

/**
 * Steps for a rollout that ran as attempts (no step loop committed any): one per model call of the
 * final attempt, in order, so its trajectory reads like a stepwise one (the prompt is put back from
 * the call like any step's). The last step carries the rollout's reward and `done`.
 */
export function attemptSteps(
  rolloutId: string,
  calls: LlmCall[],
  state: Pick<SessionState, "final_attempt" | "reward" | "termination_reason">,
): Step[] {
  const finalCalls = calls.filter(
    (call) =>
      call.attempt !== null && call.attempt === state.final_attempt && call.purpose !== "judge",
  );
  return finalCalls.map((call, index) => {
    const last = index === finalCalls.length - 1;
    const text = messageText(call.response_message);
    const messages = Array.isArray(call.request.messages) ? call.request.messages : [];
    const lastMessage = messages.at(-1);
    const observation =
      lastMessage && typeof lastMessage === "object" && !Array.isArray(lastMessage)
        ? (lastMessage.content ?? null)
        : null;
    return Step.parse({
      step_id: `${rolloutId}/attempt/${call.attempt}/step/${index}`,
      step_index: index,
      thought: thoughtOf(call.response_message),
      action: text,
      observation,
      model_response: text,
      info: { attempt: call.attempt, derived_from: "llm_call" },
      reward: last ? (state.reward ?? 0) : 0,
      done: last && state.termination_reason !== null,
      llm_call_ids: [call.call_id],
      started_at: call.created_at,
      duration_ms: call.latency_ms,
    });
  });
}
