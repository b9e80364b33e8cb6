/** @module How the gateway asks the policy object for admission around each model call. */
import type { PolicyAdmission } from "../schemas/policy";

/**
 * The policy object as the gateway sees it. `acquire` registers an in-flight call (it expires
 * after `ttlMs` if `release` never comes, e.g. when an invocation dies) and refuses calls while a
 * weight sync is under way; `release` ends it and reports the version in force at the end.
 */
export interface PolicyPort {
  acquire(callId: string, ttlMs: number): Promise<PolicyAdmission>;
  release(callId: string): Promise<{ policy_version: number }>;
}
