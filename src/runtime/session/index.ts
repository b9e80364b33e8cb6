/**
 * @module One rollout's Durable Object as the rest of the Worker uses it: its RPC interface and
 * what a driver calls on it, the results its methods answer, and the pieces routes, batches and
 * engines share (planning a fork, counting a call). Free of the Workers platform, so the Node-side
 * programs and tests can import it; the object's class is wired from `session-parts.ts`, beside it.
 */
export { ROLLOUT_SESSION_METHODS, type RolloutSessionApi } from "./session-api";
export type { SessionHandle, SessionLocator } from "./session-handle";
export {
  countCall,
  type AttemptEndResult,
  type CallCounters,
  type CancelOptions,
  type ClaimResult,
  type CreateResult,
  type FinishResult,
  type Lease,
  type ResumeState,
  type SseEvent,
  type StepCommit,
  ONLINE_OUTCOME_SPAN,
} from "./kernel";
export type { GatewayCallMeta, GatewayCallResult } from "./calls";
export { agentForkRefusal, planFork, type ForkPrefix, type ForkSourceResult } from "./fork";
export { onDeliveryChecked } from "./publication";
