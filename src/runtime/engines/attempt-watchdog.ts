/** @module Watching one attempt: its deadline, its signs of life, and its lease. */

/** Why an attempt was given up from outside its code. */
export type AttemptAbortKind = "unresponsive" | "deadline" | "lost_lease";

/** The reason an attempt's signal aborts with. */
export interface AttemptAbort {
  kind: AttemptAbortKind;
  message: string;
}

/** What the watchdog is given. */
export interface WatchdogOptions {
  /** No model call, span or heartbeat for this long gives the attempt up (`step_timeout_ms`). */
  idleMs: number;
  /** The rollout's deadline (epoch ms). */
  deadline: number;
  now: () => number;
  /** Extends the lease; resolves false when the lease is no longer this driver's. */
  renewLease: () => Promise<boolean>;
  renewEveryMs: number;
}

/**
 * Aborts `signal` when the attempt goes silent for `idleMs` (not counting time spent waiting out a
 * weight sync), when the rollout's deadline passes, or when the lease cannot be renewed (cancelled,
 * or taken over by another driver). One interval timer does all three; its period is a quarter of
 * the idle limit (50 ms to 1 s), so an abort comes at most that late.
 */
export class AttemptWatchdog {
  readonly #controller = new AbortController();
  readonly #options: WatchdogOptions;
  readonly #timer: ReturnType<typeof setInterval>;
  #lastActivity: number;
  #lastRenewal: number;
  #renewing = false;
  #paused = 0;

  constructor(options: WatchdogOptions) {
    this.#options = options;
    this.#lastActivity = this.#lastRenewal = options.now();
    const tickMs = Math.max(50, Math.min(1000, Math.floor(options.idleMs / 4)));
    this.#timer = setInterval(() => this.#tick(), tickMs);
  }

  /** Aborts with an `AttemptAbort` reason. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the attempt was given up, or null. */
  get aborted(): AttemptAbort | null {
    return this.#controller.signal.aborted
      ? (this.#controller.signal.reason as AttemptAbort)
      : null;
  }

  /** A sign of life: a model call started or ended, a span, a heartbeat, an artifact write. */
  touch(): void {
    this.#lastActivity = this.#options.now();
  }

  /** Stops (true) or restarts (false) the idle clock around a wait for a weight sync. */
  pause(waiting: boolean): void {
    this.#paused += waiting ? 1 : -1;
    if (!waiting) this.touch();
  }

  /** Stops watching (the attempt is over). */
  dispose(): void {
    clearInterval(this.#timer);
  }

  #abort(kind: AttemptAbortKind, message: string): void {
    if (!this.#controller.signal.aborted)
      this.#controller.abort({ kind, message } satisfies AttemptAbort);
    this.dispose();
  }

  #tick(): void {
    const { now, deadline, idleMs } = this.#options;
    const at = now();
    if (at >= deadline)
      return this.#abort(
        "deadline",
        "the rollout's deadline (rollout_timeout_ms) passed during the attempt",
      );
    const idle = at - this.#lastActivity;
    if (this.#paused === 0 && idle >= idleMs)
      return this.#abort(
        "unresponsive",
        `no model call, span or heartbeat for ${idle} ms (step_timeout_ms ${idleMs})`,
      );
    if (!this.#renewing && at - this.#lastRenewal >= this.#options.renewEveryMs) {
      this.#renewing = true;
      this.#options
        .renewLease()
        .then(
          (held) => {
            this.#lastRenewal = now();
            if (!held)
              this.#abort("lost_lease", "the rollout was cancelled or another driver took it over");
          },
          () => undefined,
        )
        .finally(() => (this.#renewing = false));
    }
  }
}
