/** @module The runner-facing part of a rollout session: claims, heartbeats, attempt outcomes, lost runners. */
import type { FinishRolloutRequest, RolloutSpec } from "../../../schemas/rollout-api";
import type { RunnerEvent } from "../../../schemas/batch-runners";
import { primaryReward } from "../../../schemas/span";
import { TERMINAL_STATUSES } from "../../../schemas/termination";
import type {
  AttemptEndResult,
  ClaimResult,
  HeartbeatResult,
  SessionKernel,
  SessionState,
} from "../kernel";

/** Attempts that count against `max_attempts`: hand-backs at shutdown do not. */
function attemptsUsed(state: SessionState): number {
  return state.attempt - state.released;
}

/**
 * A runner claims an external rollout as numbered attempts, the way the driver runs an attempt
 * agent: the session persists the attempt number with the lease before answering, so a claim is
 * granted once per attempt however many runners ask at the same moment (the object is
 * single-writer), and a runner that dies has used its attempt. The session, not the claim queue,
 * is the source of truth: the queue only says where to look.
 */
export class SessionClaimOps {
  readonly #kernel: SessionKernel;

  constructor(kernel: SessionKernel) {
    this.#kernel = kernel;
  }

  /** Grants `runnerId` the next attempt for `leaseMs`, unless the rollout is held, ended, or not a runner rollout. */
  async claim(runnerId: string, leaseMs: number): Promise<ClaimResult> {
    const kernel = this.#kernel;
    const spec = kernel.spec;
    const state = kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found" };
    if (spec.runner === null) return { ok: false, reason: "not_claimable" };
    if (TERMINAL_STATUSES.has(state.status)) return { ok: false, reason: "terminal" };
    const now = kernel.deps.now();
    if (now >= state.deadline) {
      kernel.end({
        termination_reason: "TIMEOUT",
        reward: null,
        error: "rollout_timeout_ms exceeded before a runner claimed it",
      });
      return { ok: false, reason: "terminal" };
    }
    if (state.lease) return { ok: false, reason: "held" };
    const epoch = state.epoch + 1;
    const attempt = state.attempt + 1;
    const lease = {
      lease_id: `${epoch}:${runnerId}`,
      driver_id: runnerId,
      epoch,
      expires_at: now + leaseMs,
      steps_at_start: state.step_count,
      attempts_at_start: attempt,
    };
    const saved = kernel.save({
      ...state,
      status: "running",
      epoch,
      attempt,
      lease,
      last_activity_at: now,
    });
    // The batch learns of the claim from the runner's heartbeats (or the attempt's outcome), not
    // from a request per claim: at 100k concurrent rollouts one batch would get ~10,000 a second.
    await kernel.scheduleWatchdog(saved, spec);
    return { ok: true, attempt, lease, spec };
  }

  /** Extends the lease of the runner that holds `attempt`; anything else means the runner must stop. */
  heartbeat(attempt: number, runnerId: string, leaseMs: number): HeartbeatResult {
    const kernel = this.#kernel;
    const spec = kernel.spec;
    const state = kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found" };
    if (TERMINAL_STATUSES.has(state.status)) return { ok: false, reason: "terminal" };
    if (!this.#holds(state, attempt, runnerId)) return { ok: false, reason: "lost" };
    // A lease past its expiry whose alarm has not fired yet is still nobody else's: renewing it is safe.
    const lease = { ...state.lease!, expires_at: kernel.deps.now() + leaseMs };
    kernel.save({ ...state, lease });
    return { ok: true, lease, batch_id: spec.group?.batch_id ?? null };
  }

  /** Ends the rollout with the outcome the holder of `attempt` reports; its calls are the ones that train. */
  async finishAttempt(
    attempt: number,
    runnerId: string,
    input: FinishRolloutRequest,
  ): Promise<AttemptEndResult> {
    const kernel = this.#kernel;
    const spec = kernel.spec;
    const state = kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found", message: "no such rollout" };
    if (TERMINAL_STATUSES.has(state.status)) {
      // A retried finish of the attempt that ended the rollout is answered, not refused.
      if (state.final_attempt === attempt)
        return { ok: true, status: state.status, termination_reason: state.termination_reason };
      return { ok: false, reason: "terminal", message: `rollout is already ${state.status}` };
    }
    if (!this.#holds(state, attempt, runnerId))
      return {
        ok: false,
        reason: "lost",
        message: `attempt ${attempt} is not held by runner ${runnerId} (its lease expired or another attempt runs)`,
      };
    const lastReward = kernel.store
      .listSpans()
      .filter((span) => span.kind === "reward" && span.attributes.attempt === attempt)
      .at(-1);
    const reward = input.reward ?? (lastReward ? primaryReward(lastReward) : null);
    if (input.messages) kernel.store.writeFinalMessages(input.messages);
    const ended = kernel.end({
      termination_reason: input.termination_reason,
      reward,
      error: input.error ?? null,
      outcome: input.outcome ?? null,
      final_attempt: attempt,
      // The batch counts the finish from the result message (batched), not from a request per rollout.
      final_runner_id: runnerId,
    });
    return {
      ok: true,
      status: ended.ok ? ended.status : state.status,
      termination_reason: input.termination_reason,
    };
  }

  /**
   * The holder gives `attempt` back: at `shutdown` the rollout is offered again and the attempt does
   * not count against `max_attempts`; `crashed` starts the next attempt, or ends AGENT_ERROR after the last.
   */
  async releaseAttempt(
    attempt: number,
    runnerId: string,
    reason: "shutdown" | "crashed",
    error: string | null,
  ): Promise<AttemptEndResult> {
    const kernel = this.#kernel;
    const spec = kernel.spec;
    const state = kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found", message: "no such rollout" };
    if (TERMINAL_STATUSES.has(state.status))
      return { ok: false, reason: "terminal", message: `rollout is already ${state.status}` };
    if (!this.#holds(state, attempt, runnerId))
      return {
        ok: false,
        reason: "lost",
        message: `attempt ${attempt} is not held by runner ${runnerId}`,
      };
    const now = kernel.deps.now();
    kernel.store.appendSpans(
      [
        {
          kind: "exception",
          name: reason === "shutdown" ? "attempt_released" : "attempt_crashed",
          value: { message: error ?? reason },
          attributes: { attempt, runner_id: runnerId },
        },
      ],
      now,
    );
    await this.#report(spec, {
      runner_id: runnerId,
      rollout_id: spec.rollout_id,
      attempt,
      kind: "released",
      lease_ms: 1,
      at: now,
    });
    const next = { ...state, released: state.released + (reason === "shutdown" ? 1 : 0) };
    if (reason === "crashed" && attemptsUsed(next) >= spec.config.max_attempts) {
      const ended = kernel.end({
        termination_reason: "AGENT_ERROR",
        reward: null,
        error: `attempt ${attempt} crashed, the last of max_attempts (${spec.config.max_attempts}): ${error ?? "no error given"}`,
        final_attempt: attempt,
      });
      return {
        ok: true,
        status: ended.ok ? ended.status : state.status,
        termination_reason: "AGENT_ERROR",
      };
    }
    await this.#offerAgain(spec, next);
    return { ok: true, status: "queued", termination_reason: null };
  }

  /**
   * The watchdog's part for runner rollouts: an expired lease is a lost runner (an exception span
   * records it, the batch counts it; its calls stay recorded and are excluded from training), and the
   * rollout is offered again as a new attempt while `max_attempts` allows, else it ends TIMEOUT. An
   * unclaimed rollout is offered again (offers are idempotent), in case the first offer was lost.
   */
  async watch(spec: RolloutSpec, state: SessionState): Promise<void> {
    const kernel = this.#kernel;
    const now = kernel.deps.now();
    if (state.lease && state.lease.expires_at > now) return kernel.scheduleWatchdog(state, spec);
    if (!state.lease) {
      await this.offer(spec);
      return kernel.scheduleWatchdog(state, spec);
    }
    const { driver_id: runnerId } = state.lease;
    const attempt = state.attempt;
    kernel.store.appendSpans(
      [
        {
          kind: "exception",
          name: "attempt_lost",
          value: { message: `runner ${runnerId} stopped heartbeating attempt ${attempt}` },
          attributes: { attempt, runner_id: runnerId },
        },
      ],
      now,
    );
    await this.#report(spec, {
      runner_id: runnerId,
      rollout_id: spec.rollout_id,
      attempt,
      kind: "lost",
      lease_ms: 1,
      at: now,
    });
    if (attemptsUsed(state) >= spec.config.max_attempts) {
      kernel.end({
        termination_reason: "TIMEOUT",
        reward: null,
        error: `runner ${runnerId} lost attempt ${attempt}, the last of max_attempts (${spec.config.max_attempts})`,
        final_attempt: attempt,
      });
      return;
    }
    await this.#offerAgain(spec, state);
  }

  /** Puts the rollout on its runner agent's claim queue; a failed offer is retried by the watchdog. */
  async offer(spec: RolloutSpec): Promise<void> {
    const claims = this.#kernel.deps.claims;
    if (!claims || spec.runner === null) return;
    try {
      await claims.offer(spec.runner, spec.rollout_id);
    } catch (error) {
      console.error("claim offer failed; the watchdog offers again", {
        rollout_id: spec.rollout_id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  #holds(state: SessionState, attempt: number, runnerId: string): boolean {
    return state.lease !== null && state.attempt === attempt && state.lease.driver_id === runnerId;
  }

  async #offerAgain(spec: RolloutSpec, state: SessionState): Promise<void> {
    const saved = this.#kernel.save({ ...state, status: "queued", lease: null });
    await this.offer(spec);
    await this.#kernel.scheduleWatchdog(saved, spec);
  }

  async #report(spec: RolloutSpec, event: RunnerEvent): Promise<void> {
    const events = this.#kernel.deps.runnerEvents;
    const batchId = spec.group?.batch_id;
    if (!events || !batchId) return;
    try {
      await events.report(batchId, event);
    } catch (error) {
      // Progress display only: the rollout's own record (spans, attempts) is the truth.
      console.warn("runner event not recorded by batch", {
        batch_id: batchId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
