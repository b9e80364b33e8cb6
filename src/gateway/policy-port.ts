/** @module How the gateway asks for admission around each model call. */
import type { PolicyAdmission } from "../schemas/policy";

/**
 * Admission as the gateway sees it (in a Worker: the rollout's admission shard). `acquire`
 * registers an in-flight call (it expires after `ttlMs` if `release` never comes, e.g. when an
 * invocation dies) and refuses calls while a weight sync is under way; `release` ends it and
 * reports the version in force at the end. The rollout id picks where the call is counted.
 */
export interface PolicyPort {
  acquire(rolloutId: string, callId: string, ttlMs: number): Promise<PolicyAdmission>;
  release(rolloutId: string, callId: string): Promise<{ policy_version: number }>;
  /** Sends the releases this port holds back (see release-on-next-admission.ts); absent when it holds none. */
  flush?(): Promise<void>;
  /** Whether every call of the rollout it admitted is known released; absent: it cannot tell. */
  releasedAll?(rolloutId: string): boolean;
}
