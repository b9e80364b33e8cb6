/**
 * @module A rollout's lifecycle as its driver sees it: create, lease, commit, hand off, finish,
 * the watchdog alarm, the drive an alarm starts, and an attempt agent's attempts.
 */
export { RolloutSessionCore } from "./rollout-session-core";
export { SessionAttemptOps } from "./session-attempts";
export type { RequestDriveResult } from "./session-drive";
