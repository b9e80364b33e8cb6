/**
 * @module The rollout's gateway calls: admitted and recorded for the gateway, run in the session
 * where they outlive the request that asked, kept while they run, run on after a restart, and
 * found again by a caller that comes back.
 */
export type { GatewayCallMeta, GatewayCallResult } from "./gateway-call";
export { SessionCalls } from "./session-calls";
export { SessionGatewayOps } from "./session-gateway";
