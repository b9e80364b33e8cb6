/** @module A step's time limit that stops counting while the step waits for a weight sync. */

/**
 * Aborts `signal` once the step has run for `stepMs` (not counting paused time) or the rollout's
 * `deadline` passes, whichever comes first. A weight sync can take minutes; a healthy step should
 * not time out for it, but the rollout's own deadline still holds.
 */
export class StepTimer {
  readonly #controller = new AbortController();
  readonly #deadline: number;
  readonly #now: () => number;
  #remainingMs: number;
  #startedAt: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #deadlineTimer: ReturnType<typeof setTimeout>;

  constructor(stepMs: number, deadline: number, now: () => number) {
    this.#now = now;
    this.#deadline = deadline;
    this.#remainingMs = stepMs;
    this.#startedAt = now();
    this.#timer = setTimeout(() => this.#abort("step"), stepMs);
    this.#deadlineTimer = setTimeout(() => this.#abort("rollout"), Math.max(0, deadline - now()));
  }

  /** Aborts when time is up; `reason` is "step" or "rollout". */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Which limit fired, if any. */
  get expired(): "step" | "rollout" | null {
    return this.#controller.signal.aborted
      ? (this.#controller.signal.reason as "step" | "rollout")
      : null;
  }

  /** Stops (true) or restarts (false) the step clock; the rollout deadline keeps running. */
  pause(paused: boolean): void {
    if (this.#controller.signal.aborted) return;
    if (paused && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#remainingMs -= this.#now() - this.#startedAt;
    } else if (!paused && this.#timer === undefined) {
      this.#startedAt = this.#now();
      this.#timer = setTimeout(() => this.#abort("step"), Math.max(0, this.#remainingMs));
    }
  }

  /** Clears both timers (call when the step is over). */
  dispose(): void {
    clearTimeout(this.#timer);
    clearTimeout(this.#deadlineTimer);
  }

  #abort(reason: "step" | "rollout"): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
    this.dispose();
  }

  /** When the rollout must end. */
  get deadline(): number {
    return this.#deadline;
  }
}
