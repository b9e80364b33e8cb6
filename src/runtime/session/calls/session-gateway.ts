/** @module The gateway-facing part of a rollout session: admitting and recording calls, spans, external finishes. */
import { LlmCall, type LlmCallInput } from "../../../schemas/llm-call";
import type { FinishRolloutRequest } from "../../../schemas/rollout-api";
import { primaryReward, type Span, type SpanInput } from "../../../schemas/span";
import { TERMINAL_STATUSES, type TerminationReason } from "../../../schemas/termination";
import { callLimitsFor } from "../../../gateway/request-shaping";
import { leaseTtlMs } from "../../../schemas/rollout-config";
import {
  accountCall,
  type AdmitCallResult,
  type FinishResult,
  type GatewayWriteResult,
  type SessionKernel,
  spanEvent,
} from "../kernel";

/**
 * Calls that reach a rollout through its gateway endpoint (external agents, user code inside
 * the Worker) and the spans and outcome an external agent reports. Shares the kernel with the
 * driver-facing core, so both write the same tables and notify the same subscribers.
 */
export class SessionGatewayOps {
  readonly #kernel: SessionKernel;

  constructor(kernel: SessionKernel) {
    this.#kernel = kernel;
  }

  /**
   * The rollout's limits and replica for the next call, unless it is missing or finished. A call
   * through a runner attempt's endpoint (`attempt` given) is refused once that attempt is no longer
   * the live one, so a runner that lost its lease stops spending the GPU on a rollout someone else runs.
   * A call admitted before the session restarted (`resumed`) is neither: it runs on, as it would
   * have had the restart not cut it, and is recorded like any call that ends after its rollout.
   */
  admitCall(attempt?: number, resumed = false): AdmitCallResult {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found", status: null };
    if (TERMINAL_STATUSES.has(state.status) && !resumed)
      return { ok: false, reason: "terminal", status: state.status };
    if (
      !resumed &&
      attempt !== undefined &&
      spec.runner !== null &&
      (state.attempt !== attempt || state.lease === null)
    )
      return { ok: false, reason: "superseded", status: state.status };
    const config = spec.config;
    return {
      ok: true,
      kind: spec.kind,
      train: config.mode === "train",
      model: config.model,
      limits: callLimitsFor(config, state),
      replica_hint: state.last_replica,
      call_ttl_ms: leaseTtlMs(config),
    };
  }

  /**
   * The call a harness turn of `attempt` may continue: the rollout's newest policy call of that
   * attempt (side calls and judges are other conversations), or null.
   */
  previousTurn(attempt: number | null): LlmCall | null {
    return this.#kernel.store.lastCallWhere(
      (call) => call.purpose === "policy" && (attempt === null || call.attempt === attempt),
    );
  }

  /**
   * Records a call made outside the step loop. A call that completes after the rollout ended is
   * still recorded (it happened, and its tokens were spent); it simply belongs to no step.
   */
  recordCall(input: LlmCallInput): GatewayWriteResult {
    const state = this.#kernel.state;
    if (!state) return { ok: false, reason: "not_found", message: "no such rollout" };
    const call = LlmCall.safeParse(input);
    if (!call.success)
      return {
        ok: false,
        reason: "invalid",
        message: `${call.error.issues[0]?.path.join(".")}: ${call.error.issues[0]?.message}`,
      };
    // A call that does not say which attempt made it (a client that bypassed the attempt's own
    // fetch) belongs to the attempt running now.
    const record =
      call.data.attempt === null && state.attempt > 0
        ? { ...call.data, attempt: state.attempt }
        : call.data;
    const { store, deps } = this.#kernel;
    deps.storage.transactionSync(() => {
      // A retried record (the same call id) stores nothing and counts no tokens again.
      const counted = store.insertCall(record) ? accountCall(state, record) : state;
      this.#kernel.save({ ...counted, last_activity_at: deps.now() });
    });
    return { ok: true };
  }

  /**
   * Corrects the version a recorded call ended under: the HTTP gateway and the stepwise driver
   * store a call while its admission is being released, with the version it was admitted under,
   * and send the newer one here in the rare case a weight sync ended while the call ran. Never
   * older than its start.
   */
  amendCallVersion(callId: string, versionEnd: number): GatewayWriteResult {
    if (!this.#kernel.state) return { ok: false, reason: "not_found", message: "no such rollout" };
    if (!Number.isSafeInteger(versionEnd) || versionEnd < 0)
      return {
        ok: false,
        reason: "invalid",
        message: "policy_version_end: must be a non-negative integer",
      };
    const outcome = this.#kernel.deps.storage.transactionSync(() =>
      this.#kernel.store.setCallVersionEnd(callId, versionEnd),
    );
    if (outcome === "missing")
      return { ok: false, reason: "not_found", message: `no call ${callId} on this rollout` };
    if (outcome === "older")
      return {
        ok: false,
        reason: "invalid",
        message: `policy_version_end: ${versionEnd} is older than the call's policy_version_start`,
      };
    return { ok: true };
  }

  /** Appends spans (numbered per rollout) to a rollout that has not ended. */
  addEvents(
    events: SpanInput[],
  ): { ok: true; spans: Span[] } | Exclude<GatewayWriteResult, { ok: true }> {
    const state = this.#kernel.state;
    if (!state) return { ok: false, reason: "not_found", message: "no such rollout" };
    if (TERMINAL_STATUSES.has(state.status))
      return { ok: false, reason: "terminal", message: `rollout is ${state.status}` };
    const { store, deps } = this.#kernel;
    const now = deps.now();
    const spans = deps.storage.transactionSync(() => {
      const added = store.appendSpans(events, now);
      this.#kernel.save({ ...state, last_activity_at: now });
      return added;
    });
    for (const span of spans) this.#kernel.events.publish(spanEvent(span));
    return { ok: true, spans };
  }

  /**
   * Ends an external rollout with what its agent reports. The reward defaults to the last reward
   * span's primary value (Agent-lightning's rule), else none.
   */
  finishExternal(
    input: FinishRolloutRequest,
  ): FinishResult | Exclude<GatewayWriteResult, { ok: true }> {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found", message: "no such rollout" };
    if (spec.kind !== "external")
      return {
        ok: false,
        reason: "driven",
        message: `rollout is driven by agent "${spec.agent}"; cancel it instead`,
      };
    if (TERMINAL_STATUSES.has(state.status))
      return { ok: false, reason: "terminal", message: `rollout is already ${state.status}` };
    const lastReward = this.#kernel.store
      .listSpans()
      .filter((span) => span.kind === "reward")
      .at(-1);
    const reward = input.reward ?? (lastReward ? primaryReward(lastReward) : null);
    if (input.messages) this.#kernel.store.writeFinalMessages(input.messages);
    return this.#kernel.end({
      termination_reason: input.termination_reason,
      reward,
      error: input.error ?? null,
      outcome: input.outcome ?? null,
    });
  }

  /** Ends a rollout whose next call the gateway refused for a limit (external rollouts only; a driver ends its own). */
  endForLimit(
    reason: Extract<TerminationReason, "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH">,
    message: string,
  ): void {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state || spec.kind !== "external" || TERMINAL_STATUSES.has(state.status)) return;
    this.#kernel.end({ termination_reason: reason, reward: null, error: message });
  }
}
