/** @module What every part of a rollout session shares: storage, state transitions, events, the alarm. */
import type {
  ClaimOfferPort,
  Clock,
  DriveTrigger,
  RunnerEventsPort,
  StoragePort,
  WorkQueuePort,
} from "../../../ports";
import type { RolloutSpec } from "../../../schemas/rollout-api";
import { statusForReason, TERMINAL_STATUSES } from "../../../schemas/termination";
import { outcomeOf } from "../../../schemas/member-outcome";
import type { WorkMessage } from "../../../schemas/work-message";
import { EventHub } from "./event-hub";
import type { FinishInput, FinishResult } from "./session-results";
import type { SessionState } from "./session-state";
import type { Step } from "../../../schemas/step";
import type { JsonValue } from "../../../schemas/json";
import { SessionStore } from "./session-store";
import type { SinkDeps } from "../../../sink/publication/publish-rollout";
import { endEvent } from "./session-view";

/** How often an unleased rollout is re-announced to the work queue if no driver picked it up. */
export const UNCLAIMED_RECHECK_MS = 60_000;

/** What the session logic needs from its Durable Object. */
export interface SessionDeps {
  storage: StoragePort;
  queue: WorkQueuePort;
  now: Clock;
  /** Where finished rollouts are published; absent, nothing is published (hand-built test sessions). */
  sink?: SinkDeps;
  /** The claim queue runner rollouts are offered on; absent, they can only be claimed by id (tests). */
  claims?: ClaimOfferPort;
  /** Where a batch rollout's runner events go (the batch's tracker); absent, they are not reported. */
  runnerEvents?: RunnerEventsPort;
  /** Drives the rollout in an invocation of its own from the alarm; absent, the alarm re-announces to the queue. */
  drive?: DriveTrigger;
  /**
   * Drops the model-call admissions still counted for this rollout (its shard); absent, they
   * expire by their ttl. Called when the rollout ends and when a dead driver's lease is taken
   * over, so a weight sync never waits for calls that can no longer be committed.
   */
  releaseAdmissions?: (rolloutId: string) => Promise<void>;
}

/**
 * The session's shared machinery. The store keeps the state it last read or wrote in memory
 * (the object is its storage's only writer); a transaction that throws rolls its writes back, so
 * every transaction here goes through `deps.storage.transactionSync` as wrapped below, which
 * makes the store forget what it kept and read storage again.
 */
export class SessionKernel {
  /** Best effort: a failure only leaves the admissions to expire by their ttl. */
  async releaseAdmissions(rolloutId: string): Promise<void> {
    try {
      await this.deps.releaseAdmissions?.(rolloutId);
    } catch (error) {
      console.error("releasing a rollout's admissions failed; they expire by their ttl", {
        rollout_id: rolloutId,
        error: String(error),
      });
    }
  }

  readonly deps: SessionDeps;
  readonly store: SessionStore;
  readonly events = new EventHub();

  constructor(deps: SessionDeps) {
    const storage = deps.storage;
    const transactionSync = <T>(fn: () => T): T => {
      try {
        return storage.transactionSync(fn);
      } catch (error) {
        this.store.forgetCached(); // the writes were rolled back; memory must not keep them
        throw error;
      }
    };
    this.deps = { ...deps, storage: { ...storage, transactionSync } };
    this.store = SessionStore.for(storage.sql);
    this.store.migrate();
  }

  get spec(): RolloutSpec | undefined {
    return this.store.readSpec();
  }

  get state(): SessionState | undefined {
    return this.store.readState();
  }

  /** Writes `state` stamped with updated_at and returns what was written (never mutates its argument). */
  save(state: SessionState): SessionState {
    const stamped = { ...state, updated_at: this.deps.now() };
    this.store.writeState(stamped);
    return stamped;
  }

  /**
   * Stores a committed step together with the state its commit leaves, stamped as `save` does, in
   * one row (see `SessionStore.insertStep`).
   */
  saveWithStep(state: SessionState, step: Step, envSnapshot: JsonValue | null): void {
    this.store.insertStep(step, envSnapshot, { ...state, updated_at: this.deps.now() });
  }

  /**
   * Gets a new driven rollout (created, or forked) driven. With a drive trigger its own alarm is
   * set to now: the alarm drives it (`onAlarm`, no lease yet), which is what a work message
   * would lead to through the consumer's `requestDrive`, without that hop (a queue message, a
   * consumer invocation and a request per rollout); the alarm is stored with the rollout behind
   * the same output gate and retried if it fails, so it is as durable as the message. Without
   * one, the rollout is announced on the work queue and the watchdog set.
   */
  async startDriving(state: SessionState, spec: RolloutSpec): Promise<void> {
    if (this.deps.drive) {
      await this.deps.storage.setAlarm(this.deps.now());
      return;
    }
    await this.announce(spec.rollout_id, "created");
    await this.scheduleWatchdog(state, spec);
  }

  /** Puts the rollout on the work queue for a driver. */
  async announce(rolloutId: string, reason: WorkMessage["reason"]): Promise<void> {
    await this.deps.queue.send({ rollout_id: rolloutId, reason, sent_at: this.deps.now() });
  }

  /**
   * Sets the alarm to the next moment something may need doing: the rollout's deadline, or
   * earlier the lease's expiry (driven, or claimed by a runner), the idle limit (external, run by
   * its creator), or a re-announcement (re-offer for runner rollouts).
   */
  async scheduleWatchdog(state: SessionState, spec: RolloutSpec): Promise<void> {
    if (TERMINAL_STATUSES.has(state.status)) return;
    const next =
      spec.kind === "external" && spec.runner === null
        ? state.last_activity_at + spec.config.step_timeout_ms
        : state.lease
          ? state.lease.expires_at
          : this.deps.now() + UNCLAIMED_RECHECK_MS;
    await this.deps.storage.setAlarm(Math.min(next, state.deadline));
  }

  /** Moves a live rollout to its terminal state and tells every subscriber. */
  end(input: FinishInput): FinishResult {
    const state = this.state!;
    const status = statusForReason(input.termination_reason);
    const now = this.deps.now();
    const publication = this.deps.sink
      ? { ...state.publication, status: "pending" as const }
      : state.publication;
    const final_attempt = input.final_attempt ?? state.final_attempt;
    const outcome = outcomeOf(input.termination_reason, input.outcome ?? null);
    const ended = this.save({
      ...state,
      status,
      termination_reason: input.termination_reason,
      outcome,
      superseded: input.superseded === true,
      reward: input.reward,
      error: input.error,
      lease: null,
      finished_at: now,
      publication,
      final_attempt,
      final_runner_id: input.final_runner_id ?? state.final_runner_id,
      // A later lease may have taken over from a driver whose calls are still counted.
      admissions_released: input.admissions_released === true && state.epoch === 1,
    });
    this.events.publish(endEvent(ended), true);
    // Publication runs from the alarm, which the runtime retries and which survives eviction; a
    // Durable Object's output gate keeps this write ordered before any reply goes out.
    if (this.deps.sink) void this.deps.storage.setAlarm(now);
    return { ok: true, already: false, status, termination_reason: input.termination_reason };
  }
}
