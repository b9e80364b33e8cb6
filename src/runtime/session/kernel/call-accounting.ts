/** @module How one recorded model call changes a rollout's counters: the one formula for the session and the stepwise engine. */
import type { LlmCall } from "../../../schemas/llm-call";
import type { SessionState } from "./session-state";

/**
 * The counters that bound a rollout's next call: kept by the session (stored, handed to a resuming
 * driver) and by the stepwise engine between its commits, so both count alike.
 */
export type CallCounters = Pick<
  SessionState,
  | "completion_tokens"
  | "last_context_tokens"
  | "last_context_messages"
  | "last_replica"
  | "oldest_policy_version"
>;

/**
 * `counters` after `call`: its completion tokens added, its context length (prompt + completion
 * ids, else the reported total) and replica remembered, which bound the next prompt cheaply and
 * keep the rollout on one replica; the oldest version its tokens came from, for the staleness rule.
 */
export function countCall<C extends CallCounters>(counters: C, call: LlmCall): C {
  return {
    ...counters,
    completion_tokens: counters.completion_tokens + call.usage.completion_tokens,
    last_context_tokens:
      call.prompt_token_ids.length + call.completion_token_ids.length || call.usage.total_tokens,
    last_context_messages:
      (Array.isArray(call.request.messages) ? call.request.messages.length : 0) + 1,
    last_replica: call.replica,
    oldest_policy_version: Math.min(
      counters.oldest_policy_version ?? call.policy_version_start,
      call.policy_version_start,
    ),
  };
}

/** Adds a call to the session's counters (`countCall`, plus the call and prompt-token totals). */
export function accountCall(state: SessionState, call: LlmCall): SessionState {
  return {
    ...countCall(state, call),
    llm_calls: state.llm_calls + 1,
    prompt_tokens: state.prompt_tokens + call.usage.prompt_tokens,
  };
}
