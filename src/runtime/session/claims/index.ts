/** @module The runner-facing part of a rollout session: claims, heartbeats, attempt outcomes, lost runners. */
export { SessionClaimOps } from "./session-claims";
