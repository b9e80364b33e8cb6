/** @module How one recorded model call changes a session's counters. */
import type { LlmCall } from "../../schemas/llm-call";
import type { SessionState } from "./session-state";

/**
 * Adds a call to the token counters and remembers its context length and replica, which bound
 * the next prompt cheaply and keep the rollout on one replica.
 */
export function accountCall(state: SessionState, call: LlmCall): SessionState {
  return {
    ...state,
    llm_calls: state.llm_calls + 1,
    prompt_tokens: state.prompt_tokens + call.usage.prompt_tokens,
    completion_tokens: state.completion_tokens + call.usage.completion_tokens,
    last_context_tokens: call.prompt_token_ids.length + call.completion_token_ids.length || call.usage.total_tokens,
    last_context_messages: (Array.isArray(call.request.messages) ? call.request.messages.length : 0) + 1,
    last_replica: call.replica,
  };
}
