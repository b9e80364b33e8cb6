/**
 * @module The soak's own environment faults: a share of the soak agents' attempts fail in their
 * environment (the grader's check throws), as a flaky tool or service would. The rate comes from
 * the Worker's `SOAK_ENV_FAULT_RATE` (set by the soak Worker on each invocation); the count is per
 * incarnation of the Worker, read by `GET /soak/stats` before each kill.
 */

let rate = 0;
let injected = 0;

/** Sets the share of attempts whose environment fails (from the Worker's binding). */
export function setEnvFaultRate(value: number): void {
  rate = Number.isFinite(value) && value > 0 ? Math.min(1, value) : 0;
}

/** Throws an environment error for a share `rate` of calls. */
export function maybeEnvFault(where: string): void {
  if (rate === 0 || Math.random() >= rate) return;
  injected += 1;
  throw new Error(`injected environment fault (${where})`);
}

/** Environment faults injected by this incarnation of the Worker. */
export function envFaultsInjected(): number {
  return injected;
}
