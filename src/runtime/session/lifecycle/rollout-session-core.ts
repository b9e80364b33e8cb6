/** @module The logic of one rollout's Durable Object: lifecycle, leases, commits, watchdog. */
import { LlmCall } from "../../../schemas/llm-call";
import type { RolloutSpec, RolloutView } from "../../../schemas/rollout-api";
import { leaseTtlMs } from "../../../schemas/rollout-config";
import { Step, stepIdFor } from "../../../schemas/step";
import { SpanInput } from "../../../schemas/span";
import { TERMINAL_STATUSES } from "../../../schemas/termination";
import {
  accountCall,
  buildRolloutView,
  type CancelOptions,
  type CommitResult,
  type CreateResult,
  endEvent,
  type FinishInput,
  type FinishResult,
  initialState,
  type LeaseResult,
  repeatedCreate,
  type SessionKernel,
  type SessionState,
  spanEvent,
  type SseEvent,
  type StepCommit,
  stepEvent,
} from "../kernel";
import { publishIfPending } from "../publication";
import { SessionClaimOps } from "../claims";
import { SessionDriveOps } from "./session-drive";
import { readForks, withStepIndex } from "../fork";

/** Whether the rollout has stored any step or call (every stored call and step is counted in its state). */
function hasHistory(state: SessionState): boolean {
  return state.step_count > 0 || state.llm_calls > 0;
}

/**
 * One rollout's lifecycle as a driver sees it: create, lease, commit, hand off, finish, cancel,
 * the watchdog, and reads. The Durable Object makes every method single-writer.
 */
export class RolloutSessionCore {
  /**
   * Storage, state, events and the alarm, shared with the session's other parts (gateway calls,
   * attempts), which the Durable Object builds on the same kernel.
   */
  readonly #kernel: SessionKernel;

  /** Claims, heartbeats and attempt outcomes of runner rollouts (same kernel). */
  readonly claims: SessionClaimOps;

  /** Work messages ask for a drive here; the alarm runs it (see session-drive.ts). */
  readonly drive: SessionDriveOps;

  constructor(kernel: SessionKernel) {
    this.#kernel = kernel;
    this.claims = new SessionClaimOps(kernel);
    this.drive = new SessionDriveOps(kernel, kernel.deps.drive);
  }

  /** Stores a new rollout and announces it; the same rollout again is a no-op, a different one a conflict. */
  async create(spec: RolloutSpec): Promise<CreateResult> {
    // The group decides where results go (which GRPO group, which trainer): a different one is another rollout.
    const repeated = repeatedCreate(
      this.#kernel,
      spec,
      `rollout ${spec.rollout_id} already exists with a different agent, task, config or group`,
    );
    if (repeated) return repeated;
    const now = this.#kernel.deps.now();
    const fresh = initialState(now, spec.created_at + spec.config.rollout_timeout_ms);
    // An external rollout its creator runs is running from the moment it exists; no driver will
    // ever lease it. One for runners waits, queued, until a runner claims it.
    const state =
      spec.kind === "external" && spec.runner === null
        ? { ...fresh, status: "running" as const }
        : fresh;
    this.#kernel.deps.storage.transactionSync(() => {
      this.#kernel.store.writeSpec(spec);
      this.#kernel.save(state);
    });
    if (spec.runner !== null) await this.claims.offer(spec);
    if (spec.kind === "driven") await this.#kernel.startDriving(state, spec);
    else await this.#kernel.scheduleWatchdog(state, spec);
    return { ok: true, created: true, rollout_id: spec.rollout_id, status: state.status };
  }

  /** Grants `driverId` the lease unless the rollout is finished or another live lease holds it. */
  async lease(driverId: string): Promise<LeaseResult> {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found", status: null };
    if (TERMINAL_STATUSES.has(state.status))
      return { ok: false, reason: "terminal", status: state.status };
    if (spec.kind === "external") return { ok: false, reason: "held", status: state.status };
    const now = this.#kernel.deps.now();
    if (now >= state.deadline) {
      this.#kernel.end({
        termination_reason: "TIMEOUT",
        reward: null,
        error: "rollout_timeout_ms exceeded before a driver could continue",
      });
      return { ok: false, reason: "terminal", status: "failed" };
    }
    if (state.lease && state.lease.expires_at > now)
      return { ok: false, reason: "held", status: state.status };
    const epoch = state.epoch + 1;
    const lease = {
      lease_id: `${epoch}:${driverId}`,
      driver_id: driverId,
      epoch,
      expires_at: now + leaseTtlMs(spec.config),
      steps_at_start: state.step_count,
      attempts_at_start: state.attempt,
    };
    await this.#kernel.scheduleWatchdog(
      this.#kernel.save({ ...state, status: "running", epoch, lease }),
      spec,
    );
    // An expired lease means its driver died or stalled: its admitted calls can never be committed.
    if (state.lease) await this.#kernel.releaseAdmissions(spec.rollout_id);
    // A rollout's first lease has nothing to resume: its state counts no step and no call.
    const fresh = !hasHistory(state);
    const calls = fresh
      ? []
      : this.#kernel.store.listCalls().map((call) => ({
          call_id: call.call_id,
          step_id: call.step_id,
          response_message: call.response_message,
          finish_reason: call.finish_reason,
        }));
    return {
      ok: true,
      lease,
      resume: {
        spec,
        steps: fresh ? [] : this.#kernel.store.listSteps(),
        calls,
        completion_tokens: state.completion_tokens,
        last_context_tokens: state.last_context_tokens,
        last_context_messages: state.last_context_messages,
        last_replica: state.last_replica,
        oldest_policy_version: state.oldest_policy_version,
        deadline: state.deadline,
      },
    };
  }

  /** Stores one step and its calls atomically, if `leaseId` is the current lease; idempotent by step id. */
  async commitStep(leaseId: string, commit: StepCommit): Promise<CommitResult> {
    const state = this.#kernel.state;
    const spec = this.#kernel.spec;
    if (!spec || !state) return { ok: false, reason: "not_found", message: "no such rollout" };
    if (TERMINAL_STATUSES.has(state.status))
      return { ok: false, reason: "terminal", message: `rollout is ${state.status}` };
    if (!state.lease || state.lease.lease_id !== leaseId)
      return { ok: false, reason: "stale_lease", message: "lease was superseded" };
    const step = Step.safeParse(commit.step);
    const calls = commit.llm_calls.map((call) => LlmCall.safeParse(call));
    const badCall = calls.find((call) => !call.success);
    const spans = (commit.spans ?? []).map((span) => SpanInput.safeParse(span));
    const badSpan = spans.find((span) => !span.success);
    if (!step.success || badCall || badSpan) {
      const issue = !step.success
        ? step.error.issues[0]
        : (badCall?.error ?? badSpan?.error)?.issues[0];
      return {
        ok: false,
        reason: "invalid",
        message: `${issue?.path.join(".") ?? "?"}: ${issue?.message ?? "invalid"}`,
      };
    }
    // The next step under its own id cannot be stored yet (stored steps have lower indexes and their
    // own ids), so the usual commit skips the lookup; a retried or unusual one asks storage.
    const isNextStep =
      step.data.step_index === state.step_count &&
      step.data.step_id === stepIdFor(spec.rollout_id, step.data.step_index);
    if (!isNextStep && this.#kernel.store.hasStep(step.data.step_id))
      return { ok: true, duplicate: true, lease: state.lease };
    if (step.data.step_index !== state.step_count) {
      return {
        ok: false,
        reason: "out_of_order",
        message: `expected step ${state.step_count}, got ${step.data.step_index}`,
      };
    }
    const lease = { ...state.lease, expires_at: this.#kernel.deps.now() + leaseTtlMs(spec.config) };
    let next: SessionState = { ...state, lease, step_count: state.step_count + 1 };
    const stored = this.#kernel.deps.storage.transactionSync(() => {
      // A call recorded before (by id) keeps its first record, and its tokens count once.
      for (const call of calls)
        if (this.#kernel.store.insertCall(call.data!)) next = accountCall(next, call.data!);
      // The state rides in the step's row: one row written for both.
      this.#kernel.saveWithStep(next, step.data, commit.env_snapshot);
      // Stamped with their step, so a fork copies exactly the spans of the steps it shares.
      return spans.length > 0
        ? this.#kernel.store.appendSpans(
            spans.map((span) => withStepIndex(span.data!, step.data.step_index)),
            this.#kernel.deps.now(),
          )
        : [];
    });
    // The alarm stays at the lease's earlier expiry: when it fires it finds the lease extended and
    // moves itself, which saves an alarm write on every step.
    this.#kernel.events.publish(
      stepEvent(
        step.data,
        calls.map((call) => call.data!),
      ),
    );
    for (const span of stored) this.#kernel.events.publish(spanEvent(span));
    return { ok: true, duplicate: false, lease };
  }

  /** Releases the lease and re-announces the rollout so the next invocation continues it. */
  async handoff(leaseId: string): Promise<FinishResult> {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found", status: null };
    if (TERMINAL_STATUSES.has(state.status))
      return { ok: false, reason: "terminal", status: state.status };
    if (state.lease?.lease_id !== leaseId)
      return { ok: false, reason: "stale_lease", status: state.status };
    const next = this.#kernel.save({ ...state, lease: null, handoffs: state.handoffs + 1 });
    await this.#kernel.announce(spec.rollout_id, "handoff");
    await this.#kernel.scheduleWatchdog(next, spec);
    return { ok: true, already: false, status: state.status, termination_reason: null };
  }

  /** Ends the rollout for the lease holder; finishing a finished rollout returns its outcome. */
  async finish(leaseId: string, input: FinishInput): Promise<FinishResult> {
    const state = this.#kernel.state;
    if (!state) return { ok: false, reason: "not_found", status: null };
    if (TERMINAL_STATUSES.has(state.status))
      return {
        ok: true,
        already: true,
        status: state.status,
        termination_reason: state.termination_reason,
      };
    if (state.lease?.lease_id !== leaseId)
      return { ok: false, reason: "stale_lease", status: state.status };
    if (input.messages) this.#kernel.store.writeFinalMessages(input.messages);
    return this.#kernel.end(input);
  }

  /**
   * Cancels a rollout that has not finished; a driver's next commit is then refused. A rollout
   * that already ended keeps its end (and publishes it as it is), superseded or not.
   */
  async cancel(options: CancelOptions = {}): Promise<FinishResult> {
    const state = this.#kernel.state;
    if (!state) return { ok: false, reason: "not_found", status: null };
    if (TERMINAL_STATUSES.has(state.status))
      return { ok: false, reason: "terminal", status: state.status };
    return this.#kernel.end({
      termination_reason: "CANCELLED",
      reward: null,
      error: null,
      // Over RPC: only a literal true marks the run superseded.
      superseded: options?.superseded === true,
    });
  }

  /** The watchdog: ends overdue rollouts, re-announces unclaimed ones, and counts stalled leases. */
  async onAlarm(): Promise<void> {
    if (await publishIfPending(this.#kernel)) return;
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state || TERMINAL_STATUSES.has(state.status)) return;
    const now = this.#kernel.deps.now();
    if (now >= state.deadline) {
      // Out of time with a driver still at work (a long generation) is the policy's doing; with no one driving it, not.
      const driving = state.lease !== null && state.lease.expires_at > now;
      this.#kernel.end({
        termination_reason: "TIMEOUT",
        reward: null,
        error: `rollout_timeout_ms (${spec.config.rollout_timeout_ms}) exceeded`,
        outcome: driving ? "policy" : "infra",
      });
      return;
    }
    if (spec.runner !== null) return this.claims.watch(spec, state);
    if (spec.kind === "external") {
      const idleMs = now - state.last_activity_at;
      if (idleMs < spec.config.step_timeout_ms) return this.#kernel.scheduleWatchdog(state, spec);
      this.#kernel.end({
        termination_reason: "TIMEOUT",
        reward: null,
        error: `no model call or event for ${idleMs} ms (step_timeout_ms ${spec.config.step_timeout_ms})`,
      });
      return;
    }
    if (state.lease && state.lease.expires_at > now)
      return this.#kernel.scheduleWatchdog(state, spec);
    let next = state;
    if (state.lease) {
      // Progress is a committed step (stepwise) or a started attempt (attempt agents commit no steps).
      const stalled =
        state.step_count === state.lease.steps_at_start &&
        state.attempt === state.lease.attempts_at_start;
      const stalls = state.stalls + (stalled ? 1 : 0);
      if (stalls >= spec.config.max_stalls) {
        this.#kernel.save({ ...state, stalls });
        this.#kernel.end({
          termination_reason: "TIMEOUT",
          reward: null,
          error: `no step committed during ${stalls} consecutive leases`,
        });
        return;
      }
      next = this.#kernel.save({ ...state, lease: null, stalls: stalled ? stalls : 0 });
    }
    await this.#kernel.scheduleWatchdog(next, spec);
    // Nobody holds the lease: drive it from here in its own invocation, or have the queue find a driver.
    if (await this.drive.driveFromAlarm(spec, next)) {
      // A drive that ended the rollout set the alarm for its publication; publishing here, in the
      // alarm that waited for the drive, saves that alarm's invocation (the alarm stays set until
      // the publication is stored, so an eviction in between still publishes).
      await publishIfPending(this.#kernel);
      return;
    }
    await this.#kernel.announce(spec.rollout_id, "watchdog");
  }

  /** The full view for `GET /v1/rollouts/:id`, or undefined if the rollout does not exist. */
  read(): RolloutView | undefined {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state) return undefined;
    const store = this.#kernel.store;
    return buildRolloutView(spec, state, {
      steps: store.listSteps().map((stored) => stored.step),
      calls: store.listCalls(),
      spans: store.listSpans(),
      finalMessages: store.readFinalMessages(),
      forks: readForks(this.#kernel.deps.storage.sql),
    });
  }

  /**
   * An SSE stream: `opening` (create-and-follow's `created` answer), steps after `afterStepIndex`,
   * then live steps, then the end event.
   */
  subscribe(afterStepIndex: number, opening?: SseEvent): ReadableStream<Uint8Array> | undefined {
    const state = this.#kernel.state;
    if (!state) return undefined;
    const history = hasHistory(state);
    const calls = history ? this.#kernel.store.listCalls() : [];
    // Span events carry no id, so only a fresh subscriber (no Last-Event-ID) gets the spans so far.
    const spans = afterStepIndex < 0 ? this.#kernel.store.listSpans().map(spanEvent) : [];
    const backlog = [
      ...(opening ? [opening] : []),
      ...spans,
      ...(history ? this.#kernel.store.listSteps(afterStepIndex) : []).map(({ step }) =>
        stepEvent(
          step,
          calls.filter((call) => call.step_id === step.step_id),
        ),
      ),
    ];
    const terminal = TERMINAL_STATUSES.has(state.status);
    if (terminal) backlog.push(endEvent(state));
    return this.#kernel.events.subscribe(backlog, terminal);
  }
}
