/**
 * @module The staleness rule applied while a rollout runs: whenever its session learns of a newer
 * policy version (a call's admission, a weight sync reaching it), a rollout whose oldest token is
 * more than its training mode's `max_staleness` behind is ended STALE and its calls are stopped,
 * instead of generating to its end only to be dropped when the trainer pulls its group. The rule
 * itself (src/training/staleness.ts) is the one the feed applies at pull time.
 */
import { StaleRolloutError } from "../../../errors";
import { TERMINAL_STATUSES } from "../../../schemas/termination";
import { staleReason } from "../../../training/staleness";
import type { SessionKernel } from "../kernel";

/** Ends its session's rollout STALE when the rule says so, and stops the calls it runs. */
export class SessionStaleness {
  readonly #kernel: SessionKernel;
  readonly #stopCalls: () => void;
  /**
   * The oldest version a call of this object life was admitted under (its first leg's): a call cut
   * by an interrupting sync resumes under a newer admission, but its tokens keep the first version,
   * and it is recorded only when it ends. In memory: after a restart the admission shard's count
   * (`inFlightSince`) and the recorded calls remain.
   */
  #admitted: number | null = null;

  /** `stopCalls` aborts the calls the session runs and cuts those its driver runs. */
  constructor(kernel: SessionKernel, stopCalls: () => void) {
    this.#kernel = kernel;
    this.#stopCalls = stopCalls;
  }

  /**
   * Applies the rule at `currentVersion` (a version known to be in force, or the least one a sync
   * under way will end at): ends a live rollout that can no longer be trained. `inFlightSince`,
   * the oldest version a call still generating was admitted under, counts as one of its tokens'.
   * True when the rollout is (now or already) ended STALE.
   */
  check(currentVersion: number, inFlightSince?: number): boolean {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state || !Number.isSafeInteger(currentVersion)) return false;
    if (TERMINAL_STATUSES.has(state.status)) return state.termination_reason === "STALE";
    const known = [state.oldest_policy_version, this.#admitted, inFlightSince ?? null].filter(
      (version): version is number => version !== null && Number.isSafeInteger(version),
    );
    const stale = staleReason(spec, currentVersion, known.length > 0 ? Math.min(...known) : null);
    if (stale === null) return false;
    this.#kernel.end({ termination_reason: "STALE", reward: null, error: stale });
    this.#stopCalls();
    return true;
  }

  /** Remembers that a call of the rollout was admitted under `version` (its tokens will carry it). */
  noteAdmitted(version: number): void {
    if (!Number.isSafeInteger(version)) return;
    this.#admitted = Math.min(this.#admitted ?? version, version);
  }

  /** `check`, throwing StaleRolloutError when the rollout is stale: for a call about to start under `currentVersion`. */
  admit(currentVersion: number): void {
    this.noteAdmitted(currentVersion);
    if (!this.check(currentVersion)) return;
    throw new StaleRolloutError(this.#kernel.state?.error ?? "rollout is stale");
  }
}
