/** @module The Durable Object that holds the policy and named resources: typed RPC methods over PolicyCore. */
import { DurableObject } from "cloudflare:workers";
import type { PolicyAdmission } from "../src/schemas/policy";
import type { PolicyView } from "../src/runtime/policy/policy-api";
import { PolicyCore } from "../src/runtime/policy/policy-core";
import type { BeginSyncResult, EndSyncResult, GetResourceResult, PutResourceResult, ReleaseResult, UpdateResult, WaitIdleResult } from "../src/runtime/policy/policy-results";

/**
 * The policy version, model, backend and sampling defaults the trainer controls, the admission of
 * every model call around a weight sync, and immutable versioned resources. One instance, named
 * "default" (see functions/policy-stub.ts); single-writer, so admission needs no further locking.
 */
export class PolicyStore extends DurableObject<Env> {
  readonly #core: PolicyCore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = ctx.storage;
    this.#core = new PolicyCore({
      storage: { sql: storage.sql, transactionSync: (fn) => storage.transactionSync(fn) },
      now: () => Date.now(),
    });
  }

  /** The policy, sync state, live in-flight count and resources. */
  snapshot(): PolicyView {
    return this.#core.snapshot();
  }

  /** Changes model, backend and/or sampling (validated here too: RPC callers are not trusted). */
  update(patch: unknown): UpdateResult {
    return this.#core.update(patch);
  }

  /** Starts refusing new model calls until `endSync` (idempotent). */
  beginSync(requestedVersion?: number): BeginSyncResult {
    return this.#core.beginSync(requestedVersion);
  }

  /** Resolves when no call is in flight or after `timeoutMs`. */
  waitIdle(timeoutMs: number): Promise<WaitIdleResult> {
    return this.#core.waitIdle(timeoutMs);
  }

  /** Ends the sync with a newer policy version. */
  endSync(policyVersion: number): EndSyncResult {
    return this.#core.endSync(policyVersion);
  }

  /** Admits one model call, or refuses it while weights sync. */
  acquire(callId: string, ttlMs: number): PolicyAdmission {
    return this.#core.acquire(callId, ttlMs);
  }

  /** Ends an in-flight call; returns the version in force now. */
  release(callId: string): ReleaseResult {
    return this.#core.release(callId);
  }

  /** Appends a new immutable version of a resource. */
  putResource(name: string, value: unknown): PutResourceResult {
    return this.#core.putResource(name, value);
  }

  /** One version of a resource (the latest by default). */
  getResource(name: string, version?: number): GetResourceResult {
    return this.#core.getResource(name, version);
  }
}
