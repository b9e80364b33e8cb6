/** @module What an AdmissionShard object offers over RPC: the interface the class implements and its stubs are typed by. */
import { methodNames } from "../../rpc-surface";
import type { PolicyAdmission, PolicySnapshot } from "../../schemas/policy";
import type { RequestCounts } from "../request-counter";
import type { AdmissionFence } from "./admission-fence";
import type { ApplyResult } from "./admission-shard-core";
import type { GetResourceResult, ReleaseResult } from "./policy-results";

/** One admission shard (`admission-<k>`): admits and counts the model calls of the rollouts that hash to it. */
export interface AdmissionShardApi {
  /** Releases `releasing` (ended calls of the same rollout), then admits one model call, or refuses it while weights sync. */
  acquire(
    callId: string,
    ttlMs: number,
    rolloutId?: string,
    releasing?: readonly string[],
  ): Promise<PolicyAdmission>;
  /** Ends every call of a rollout that ended or whose driver died; returns how many were dropped. */
  releaseRollout(rolloutId: string): number;
  /** Ends an in-flight call; returns the version in force now. */
  release(callId: string): ReleaseResult;
  /** Takes the policy's fence (if newer) and reports the calls in flight. */
  apply(fence: AdmissionFence): ApplyResult;
  /** The policy as this shard enforces it (what a runner's claim is answered with). */
  policySnapshot(): Promise<PolicySnapshot>;
  /** The latest version of a named resource, read from the policy object once per version. */
  resource(name: string): Promise<GetResourceResult>;
  /** Calls admitted and not released or expired. */
  inFlight(): number;
  /** Requests this object served and the SQLite rows it read and wrote since it started (benchmarks read it; not persisted). */
  requestCounts(): RequestCounts;
}

/** Every method of AdmissionShardApi, at run time. */
export const ADMISSION_SHARD_METHODS = methodNames<AdmissionShardApi>({
  acquire: true,
  releaseRollout: true,
  release: true,
  apply: true,
  policySnapshot: true,
  resource: true,
  inFlight: true,
  requestCounts: true,
});
