/**
 * @module How a rollout gets driven in an invocation of its own: a work message asks the session
 * to drive (`requestDrive` sets the alarm to now), and the alarm, a top-level event with its own
 * budget, calls the Worker's stateless drive route for this one rollout.
 */
import type { DriveTrigger } from "../../../ports";
import type { RolloutSpec } from "../../../schemas/rollout-api";
import { TERMINAL_STATUSES } from "../../../schemas/termination";
import type { SessionKernel, SessionState } from "../kernel";

/** `requestDrive`: whether the alarm was set (`scheduled`), or why there is nothing to drive. */
export type RequestDriveResult =
  { ok: true; scheduled: boolean } | { ok: false; reason: "not_found" | "terminal" | "external" };

/** How often the alarm, while it waits for its driver, checks that the driver's lease is still alive. */
export const DRIVE_CHECK_MS = 1_000;

/** Lets the work queue hand a rollout to its session's alarm, and lets the alarm drive it. */
export class SessionDriveOps {
  readonly #kernel: SessionKernel;
  readonly #trigger: DriveTrigger | undefined;

  constructor(kernel: SessionKernel, trigger: DriveTrigger | undefined) {
    this.#kernel = kernel;
    this.#trigger = trigger;
  }

  /** Whether this session drives from its alarm (a `DRIVER` binding exists). */
  get enabled(): boolean {
    return this.#trigger !== undefined;
  }

  /**
   * Sets the alarm to now unless a live lease means a driver is already at work (duplicate work
   * messages are therefore harmless). The consumer invocation that calls this ends at once, so
   * one consumer batch never holds rollouts back until its slowest one is done.
   */
  async requestDrive(): Promise<RequestDriveResult> {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found" };
    if (TERMINAL_STATUSES.has(state.status)) return { ok: false, reason: "terminal" };
    if (spec.kind === "external") return { ok: false, reason: "external" };
    const now = this.#kernel.deps.now();
    if (state.lease && state.lease.expires_at > now) return { ok: true, scheduled: false };
    await this.#kernel.deps.storage.setAlarm(now);
    return { ok: true, scheduled: true };
  }

  /**
   * From the alarm, for a rollout with no live lease: drives it in its own invocation and waits
   * for it (so the object stays awake exactly as long as its rollout is being driven). Only one
   * alarm runs at a time, so while it waits it also does the watchdog's job: once the rollout
   * ends, or a lease taken since expires unrenewed (a hung or dead driver), it stops waiting and
   * returns, and the next alarm counts the stall. A driver that fails is logged, not thrown.
   * Returns false when no trigger is wired (the caller re-announces to the queue instead).
   */
  async driveFromAlarm(spec: RolloutSpec, state: SessionState): Promise<boolean> {
    if (!this.#trigger || spec.kind === "external") return false;
    const abandon = new AbortController();
    let done = false;
    const drive = this.#trigger(spec.rollout_id, abandon.signal).then(
      () => void (done = true),
      (error: unknown) => {
        done = true;
        if (!abandon.signal.aborted)
          console.error("drive invocation failed", {
            rollout_id: spec.rollout_id,
            error: String(error),
          });
      },
    );
    while (!done) {
      await Promise.race([drive, new Promise((resolve) => setTimeout(resolve, DRIVE_CHECK_MS))]);
      if (done) break;
      const now = this.#kernel.deps.now();
      const current = this.#kernel.state;
      const lease = current?.lease;
      const abandoned =
        !current ||
        TERMINAL_STATUSES.has(current.status) ||
        now >= current.deadline ||
        (lease !== null &&
          lease !== undefined &&
          lease.epoch > state.epoch &&
          lease.expires_at <= now);
      if (abandoned) {
        abandon.abort();
        await this.#kernel.deps.storage.setAlarm(now);
        break;
      }
    }
    return true;
  }
}
