/** @module What the PolicyStore object offers over RPC: the interface the class implements and its stubs are typed by. */
import { methodNames } from "../../rpc-surface";
import type { RequestCounts } from "../request-counter";
import type { AdmissionFence } from "./admission-fence";
import type { PolicyView } from "../../schemas/policy";
import type {
  BeginSyncResult,
  AbortSyncResult,
  EndSyncResult,
  GetResourceResult,
  PutResourceResult,
  UpdateResult,
  WaitIdleResult,
} from "./policy-results";
import type { SyncRecord } from "./policy-storage";
import type { FieldProblem, PressureShare, PressureView } from "../../schemas/pressure";

/** The policy object (one per deployment): version, model, backend, sampling, weight syncs, resources. */
export interface PolicyStoreApi {
  /** The policy, sync state, in-flight count over all shards, and resources. */
  snapshot(): Promise<PolicyView>;
  /** The fence in force (what a shard without one asks for; also the cheap way to read the version). */
  fence(): AdmissionFence;
  /** Pushes the current fence to every shard again. */
  republish(): Promise<number>;
  /** Changes model, backend and/or sampling (validated by the object: RPC callers are not trusted). */
  update(patch: unknown): Promise<UpdateResult>;
  /** Starts refusing new model calls in every shard until `endSync` (idempotent). */
  beginSync(requestedVersion?: number, mode?: "drain" | "interrupt"): Promise<BeginSyncResult>;
  /** Resolves when no call is in flight in any shard, or after `timeoutMs`. */
  waitIdle(timeoutMs: number): Promise<WaitIdleResult>;
  /** Ends the sync with a newer policy version. */
  endSync(policyVersion: number): Promise<EndSyncResult>;
  /** Ends the sync keeping the version it began under (a weight load that failed). */
  abortSync(): Promise<AbortSyncResult>;
  /** Weight syncs that ended and began in `[from, to)` (ms), oldest first: the run view's sync waits. */
  syncs(from: number, to: number, limit?: number): SyncRecord[];
  /** Appends a new immutable version of a resource. */
  putResource(name: string, value: unknown): Promise<PutResourceResult>;
  /** One version of a resource (the latest by default). */
  getResource(name: string, version?: number): GetResourceResult;
  /** KV-pressure control: its config, the budget of rollouts in flight, the last sample and the batches' shares. */
  pressure(): PressureView;
  /** Merges a `PUT /v1/policy/pressure` body (validated by the object) into the pressure config. */
  configurePressure(
    patch: unknown,
  ): Promise<{ ok: true; view: PressureView } | { ok: false; errors: FieldProblem[] }>;
  /** A batch tracker's periodic ask (its alarm, never per call): its share of the rollouts in flight. */
  pressureShare(batchId: string, maxConcurrent: number, live: number): Promise<PressureShare>;
  /** Requests this object served since it started (benchmarks read it; not persisted). */
  requestCounts(): RequestCounts;
}

/** Every method of PolicyStoreApi, at run time. */
export const POLICY_STORE_METHODS = methodNames<PolicyStoreApi>({
  snapshot: true,
  fence: true,
  republish: true,
  update: true,
  beginSync: true,
  waitIdle: true,
  endSync: true,
  abortSync: true,
  syncs: true,
  putResource: true,
  getResource: true,
  pressure: true,
  configurePressure: true,
  pressureShare: true,
  requestCounts: true,
});
