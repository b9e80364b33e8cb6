/** @module The Durable Object that holds the policy and named resources: typed RPC methods over PolicyCore. */
import { DurableObject } from "cloudflare:workers";
import type { PolicyView } from "../src/runtime/policy/policy-api";
import type { AdmissionFence } from "../src/runtime/policy/admission-fence";
import { objects } from "../src/runtime/objects/object-directory";
import { PolicyCore } from "../src/runtime/policy/policy-core";
import type { PolicyStoreApi } from "../src/runtime/policy/policy-store-api";
import type {
  BeginSyncResult,
  AbortSyncResult,
  EndSyncResult,
  GetResourceResult,
  PutResourceResult,
  UpdateResult,
  WaitIdleResult,
} from "../src/runtime/policy/policy-results";
import { RequestCounter, type RequestCounts } from "../src/runtime/request-counter";
import type { SyncRecord } from "../src/runtime/policy/policy-storage";

/**
 * The policy version, model, backend and sampling defaults the trainer controls, the weight-sync
 * handshake, and immutable versioned resources. One instance, POLICY_OBJECT_NAME (see
 * src/runtime/objects/object-names.ts). Model calls never come here: the admission shards admit them under
 * the fence this object pushes on every change (so it serves trainer requests, not traffic).
 */
export class PolicyStore extends DurableObject<Env> implements PolicyStoreApi {
  readonly #core: PolicyCore;
  readonly #requests = new RequestCounter();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = ctx.storage;
    this.#core = new PolicyCore({
      storage: { sql: storage.sql, transactionSync: (fn) => storage.transactionSync(fn) },
      now: () => Date.now(),
      shards: objects(env).shards(),
    });
  }

  /** The policy, sync state, in-flight count over all shards, and resources. */
  snapshot(): Promise<PolicyView> {
    this.#requests.count("snapshot");
    return this.#core.snapshot();
  }

  /** The fence in force (what a shard without one asks for; also the cheap way to read the version). */
  fence(): AdmissionFence {
    this.#requests.count("fence");
    return this.#core.fence();
  }

  /** Pushes the current fence to every shard again. */
  republish(): Promise<number> {
    this.#requests.count("republish");
    return this.#core.republish();
  }

  /** Changes model, backend and/or sampling (validated here too: RPC callers are not trusted). */
  update(patch: unknown): Promise<UpdateResult> {
    this.#requests.count("update");
    return this.#core.update(patch);
  }

  /** Starts refusing new model calls in every shard until `endSync` (idempotent). */
  beginSync(requestedVersion?: number, mode?: "drain" | "interrupt"): Promise<BeginSyncResult> {
    this.#requests.count("beginSync");
    return this.#core.beginSync(requestedVersion, mode);
  }

  /** Resolves when no call is in flight in any shard, or after `timeoutMs`. */
  waitIdle(timeoutMs: number): Promise<WaitIdleResult> {
    this.#requests.count("waitIdle");
    return this.#core.waitIdle(timeoutMs);
  }

  /** Ends the sync with a newer policy version. */
  endSync(policyVersion: number): Promise<EndSyncResult> {
    this.#requests.count("endSync");
    return this.#core.endSync(policyVersion);
  }

  /** Ends the sync keeping the version it began under (a weight load that failed). */
  abortSync(): Promise<AbortSyncResult> {
    this.#requests.count("abortSync");
    return this.#core.abortSync();
  }

  /** Weight syncs that ended and began in `[from, to)` (ms), oldest first: the run view's sync waits. */
  syncs(from: number, to: number, limit?: number): SyncRecord[] {
    this.#requests.count("syncs");
    return this.#core.syncs(from, to, limit);
  }

  /** Appends a new immutable version of a resource. */
  putResource(name: string, value: unknown): Promise<PutResourceResult> {
    this.#requests.count("putResource");
    return this.#core.putResource(name, value);
  }

  /** One version of a resource (the latest by default). */
  getResource(name: string, version?: number): GetResourceResult {
    this.#requests.count("getResource");
    return this.#core.getResource(name, version);
  }

  /** Requests this object served since it started (benchmarks read it; not persisted). */
  requestCounts(): RequestCounts {
    return this.#requests.read();
  }
}
