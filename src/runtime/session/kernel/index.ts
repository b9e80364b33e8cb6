/**
 * @module The kernel every part of a rollout session shares: its storage (tables, values, calls
 * stored against the call before), its state and the transitions of it, the result unions of its
 * methods, its events and the view it presents. It imports no other part of the session.
 */
export { SessionKernel } from "./session-kernel";
export { SessionStore, type StoredStep } from "./session-store";
export { Lease, SessionState, initialState } from "./session-state";
export type {
  AdmitCallResult,
  AttemptEndResult,
  BeginAttemptResult,
  CancelOptions,
  ClaimResult,
  CommitResult,
  CreateResult,
  FinishInput,
  FinishResult,
  GatewayWriteResult,
  HeartbeatResult,
  LeaseResult,
  RenewLeaseResult,
  ResumeState,
  StepCommit,
} from "./session-results";
export { accountCall, countCall, type CallCounters } from "./call-accounting";
export { decodeCall, encodeCall, type StoredCall } from "./call-codec";
export { repeatedCreate } from "./same-rollout";
export type { SseEvent } from "./event-hub";
export { buildRolloutView, endEvent, spanEvent, stepEvent } from "./session-view";
export { ONLINE_OUTCOME_SPAN } from "./online-fields";
