/** @module The attempt-facing part of a rollout session: counting attempts, renewing leases, an attempt's calls. */
import type { LlmCall } from "../../../schemas/llm-call";
import { leaseTtlMs } from "../../../schemas/rollout-config";
import { TERMINAL_STATUSES } from "../../../schemas/termination";
import type { BeginAttemptResult, RenewLeaseResult, SessionKernel } from "../kernel";

/**
 * Function, LitAgent and workflow agents cannot be checkpointed inside user code, so they run as
 * whole attempts. The session counts attempts durably: `beginAttempt` writes the new number before
 * the driver runs any user code, so an invocation that dies mid-attempt has used that attempt, and
 * the next driver starts the one after it.
 */
export class SessionAttemptOps {
  readonly #kernel: SessionKernel;

  constructor(kernel: SessionKernel) {
    this.#kernel = kernel;
  }

  /** Starts attempt `attempt + 1` for the lease holder, unless `max_attempts` have already started. */
  beginAttempt(leaseId: string): BeginAttemptResult {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found", attempts: 0 };
    if (TERMINAL_STATUSES.has(state.status))
      return { ok: false, reason: "terminal", attempts: state.attempt };
    if (state.lease?.lease_id !== leaseId)
      return { ok: false, reason: "stale_lease", attempts: state.attempt };
    if (state.attempt >= spec.config.max_attempts)
      return { ok: false, reason: "exhausted", attempts: state.attempt };
    const lease = { ...state.lease, expires_at: this.#kernel.deps.now() + leaseTtlMs(spec.config) };
    this.#kernel.save({ ...state, attempt: state.attempt + 1, lease });
    return { ok: true, attempt: state.attempt + 1, lease };
  }

  /**
   * Extends the lease of a driver whose attempt is still alive. The alarm stays where it is: when it
   * fires it finds the lease extended and moves itself (as after a step commit).
   */
  renewLease(leaseId: string): RenewLeaseResult {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found" };
    if (TERMINAL_STATUSES.has(state.status)) return { ok: false, reason: "terminal" };
    if (state.lease?.lease_id !== leaseId) return { ok: false, reason: "stale_lease" };
    const lease = { ...state.lease, expires_at: this.#kernel.deps.now() + leaseTtlMs(spec.config) };
    this.#kernel.save({ ...state, lease });
    return { ok: true, lease };
  }

  /** The calls attempt `attempt` made, in the order they were recorded. */
  attemptCalls(attempt: number): LlmCall[] {
    return this.#kernel.store.listCalls().filter((call) => call.attempt === attempt);
  }
}
