/**
 * @module What the Worker's routes and wiring use of the gateway's top-level files: the in-process
 * model client, admission that releases on the next one, per-rollout API keys, errors across a
 * Durable Object RPC, and the upstream paths. The APIs and the backends have their own doors
 * (`./apis/messages`, `./apis/responses`, `./apis/chat`, `./backends`); no file of the gateway
 * imports this one.
 */
export type { UpstreamPath } from "./model-backend";
export { createModelClient } from "./model-client";
export { releaseOnNextAdmission, type ReleasingPolicyPort } from "./release-on-next-admission";
export { checkRolloutKey, rolloutKey } from "./rollout-keys";
export { fromWireError } from "./wire-errors";
