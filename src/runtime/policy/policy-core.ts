/** @module The logic of the policy object: version, sync, in-flight admission, resources. */
import type { PolicyAdmission } from "../../schemas/policy";
import type { Clock, StoragePort } from "../../ports";
import { MAX_SYNC_WAIT_MS, PolicyUpdate, resourceId, type PolicyView } from "./policy-api";
import type { BeginSyncResult, EndSyncResult, FieldIssue, GetResourceResult, PutResourceResult, ReleaseResult, UpdateResult, WaitIdleResult } from "./policy-results";
import { snapshotOf, type PolicyState } from "./policy-state";
import { PolicyStorage } from "./policy-storage";
import { validateResource } from "./resource-input";

/** Seconds a refused call is told to wait while weights sync (the gateway's Retry-After). */
export const SYNC_RETRY_AFTER_S = 1;
/** How often `waitIdle` re-counts in-flight calls. */
export const IDLE_POLL_MS = 50;
/**
 * Longest an admitted call counts as in flight without a release: the ttl only guards against
 * invocations that died, and a longer one would let a dead call hold up a sync that long.
 */
export const MAX_CALL_TTL_MS = 3_600_000;

/** What the policy logic needs from its Durable Object. */
export interface PolicyDeps {
  storage: Pick<StoragePort, "sql" | "transactionSync">;
  now: Clock;
  /** Waits `ms`; injected so unit tests need no real timers. Default: setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The policy a trainer controls and the admission of every model call. The Durable Object makes
 * each method single-writer; `acquire` and `release` run on every model call, so they touch one
 * state row and one in_flight row by key and nothing else. Expired in-flight rows are purged
 * lazily where a count matters (view, sync), never on the hot path.
 */
export class PolicyCore {
  readonly #storage: PolicyStorage;
  readonly #deps: PolicyDeps;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(deps: PolicyDeps) {
    this.#deps = deps;
    this.#storage = new PolicyStorage(deps.storage.sql);
    this.#storage.migrate();
    this.#sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  #save(state: PolicyState, now: number): void {
    this.#storage.writeState({ ...state, updated_at: now });
  }

  #liveCount(now: number): number {
    this.#storage.purgeExpired(now);
    return this.#storage.countLive(now);
  }

  /** The policy, sync state, live in-flight count and resources with their latest versions. */
  snapshot(): PolicyView {
    const now = this.#deps.now();
    const state = this.#storage.readState(now);
    return { ...snapshotOf(state), syncing: state.syncing, in_flight: this.#liveCount(now), resources: this.#storage.listResources(), updated_at: state.updated_at };
  }

  /** Replaces the given fields (sampling keys merge); never changes `policy_version`. */
  update(patch: unknown): UpdateResult {
    const parsed = PolicyUpdate.safeParse(patch);
    if (!parsed.success) {
      const errors: FieldIssue[] = parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join(".") || "(body)", message: issue.message }));
      return { ok: false, reason: "invalid", errors };
    }
    const now = this.#deps.now();
    const state = this.#storage.readState(now);
    const { model, backend, sampling } = parsed.data;
    // Keys sent as undefined (possible over RPC) must not erase current values.
    const samplingChanges = Object.fromEntries(Object.entries(sampling ?? {}).filter(([, value]) => value !== undefined));
    this.#save({
      ...state,
      model: model === undefined ? state.model : model,
      backend: backend === undefined ? state.backend : backend,
      sampling: { ...state.sampling, ...samplingChanges },
    }, now);
    return { ok: true, policy: this.snapshot() };
  }

  /** Marks a weight sync as under way so new calls are refused; calling it again is harmless. */
  beginSync(requestedVersion?: number): BeginSyncResult {
    const now = this.#deps.now();
    const state = this.#storage.readState(now);
    const already = state.syncing !== null;
    const requested = requestedVersion ?? state.syncing?.requested_version;
    if (!already || requested !== state.syncing?.requested_version) {
      const syncing = { since: state.syncing?.since ?? now, ...(requested === undefined ? {} : { requested_version: requested }) };
      this.#save({ ...state, syncing }, now);
    }
    return { policy_version: state.policy_version, in_flight: this.#liveCount(now), already };
  }

  /**
   * Resolves once no admitted call is in flight or `timeoutMs` (at most 10 minutes) has passed.
   * It polls storage on a timer rather than being woken by `release`, because a timer await opens
   * the object's input gate: the releases it waits for run in between.
   */
  async waitIdle(timeoutMs: number): Promise<WaitIdleResult> {
    const deadline = this.#deps.now() + Math.min(Math.max(0, timeoutMs), MAX_SYNC_WAIT_MS);
    for (;;) {
      const now = this.#deps.now();
      const inFlight = this.#liveCount(now);
      if (inFlight === 0 || now >= deadline) return { in_flight: inFlight };
      await this.#sleep(Math.min(IDLE_POLL_MS, deadline - now));
    }
  }

  /** Ends a sync with the version of the weights now loaded, which must be newer than the current one. */
  endSync(policyVersion: number): EndSyncResult {
    const now = this.#deps.now();
    const state = this.#storage.readState(now);
    if (!state.syncing) return { ok: false, reason: "not_syncing", policy_version: state.policy_version };
    if (!(policyVersion > state.policy_version)) return { ok: false, reason: "version_not_newer", policy_version: state.policy_version };
    this.#save({ ...state, policy_version: policyVersion, syncing: null }, now);
    return { ok: true, policy_version: policyVersion, previous_version: state.policy_version };
  }

  /**
   * Admits one model call and registers it as in flight for `ttlMs`, or refuses it while weights
   * sync. Idempotent by `callId`: a call admitted before the sync began is admitted again (it is
   * already counted and the sync is waiting for it), and a repeat extends its expiry.
   */
  acquire(callId: string, ttlMs: number): PolicyAdmission {
    if (typeof callId !== "string" || callId === "") throw new TypeError("callId must be a non-empty string");
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError("ttlMs must be a positive number");
    const now = this.#deps.now();
    const state = this.#storage.readState(now);
    if (state.syncing) {
      if (this.#storage.isLive(callId, now)) return { ok: true, ...snapshotOf(state) };
      return { ok: false, reason: "syncing", retry_after_s: SYNC_RETRY_AFTER_S, policy_version: state.policy_version };
    }
    this.#storage.upsertCall(callId, now + Math.min(ttlMs, MAX_CALL_TTL_MS), state.policy_version);
    return { ok: true, ...snapshotOf(state) };
  }

  /** Ends an in-flight call (unknown ids are fine) and reports the version in force now. */
  release(callId: string): ReleaseResult {
    this.#storage.deleteCall(callId);
    return { policy_version: this.#storage.readState(this.#deps.now()).policy_version };
  }

  /** Stores `value` as the next version of resource `name`; earlier versions never change. */
  putResource(name: string, value: unknown): PutResourceResult {
    const checked = validateResource(name, value);
    if (!checked.ok) return checked;
    const now = this.#deps.now();
    const version = this.#deps.storage.transactionSync(() => {
      const next = this.#storage.latestVersion(name) + 1;
      this.#storage.insertResource(name, next, checked.json, now);
      return next;
    });
    return { ok: true, name, version, id: resourceId(name, version) };
  }

  /** One version of resource `name`, the latest when `version` is omitted. */
  getResource(name: string, version?: number): GetResourceResult {
    const wanted = version ?? this.#storage.latestVersion(name);
    const record = Number.isInteger(wanted) && wanted >= 1 ? this.#storage.readResource(name, wanted) : undefined;
    return record ? { ok: true, ...record } : { ok: false, reason: "not_found" };
  }
}
