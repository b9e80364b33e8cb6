/** @module The logic of the policy object: version, sync (fenced through the admission shards), resources. */
import type { Clock, StoragePort } from "../../ports";
import type { PolicyView } from "../../schemas/policy";
import { MAX_SYNC_WAIT_MS, PolicyUpdate, resourceId } from "./policy-api";
import type {
  BeginSyncResult,
  AbortSyncResult,
  EndSyncResult,
  FieldIssue,
  GetResourceResult,
  PutResourceResult,
  UpdateResult,
  WaitIdleResult,
} from "./policy-results";
import type { AdmissionFence } from "./admission-fence";
import type { ApplyResult } from "./admission-shard-core";
import { fenceOf, snapshotOf, type PolicyState } from "./policy-state";
import { PolicyStorage, type SyncRecord } from "./policy-storage";
import { validateResource } from "./resource-input";

/** How often `waitIdle` re-counts in-flight calls across the shards. */
export const IDLE_POLL_MS = 50;
/** Tries of one fence push to one shard before the change fails (a shard that cannot be told must not be skipped). */
const PUSH_TRIES = 3;

/** One admission shard as the policy object reaches it. */
export interface ShardPort {
  apply(fence: AdmissionFence): Promise<ApplyResult>;
  inFlight(): Promise<number>;
}

/** What the policy logic needs from its Durable Object. */
export interface PolicyDeps {
  storage: Pick<StoragePort, "sql" | "transactionSync">;
  now: Clock;
  /** Every admission shard of the deployment (see ../object-names.ts). */
  shards: ShardPort[];
  /** Waits `ms`; injected so unit tests need no real timers. Default: setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The policy a trainer controls. Model calls never reach this object: they are admitted and
 * counted by the admission shards, to which every change here is pushed as a fence (snapshot,
 * sync flag, generation) before the change is answered. So once `beginSync` returns, every
 * shard refuses new calls, and the sum of the shards' counts is exactly the calls admitted under
 * the old version that are still in flight.
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

  /** Saves `state` as the next generation and pushes it to every shard; resolves with their in-flight total. */
  async #save(state: PolicyState, now: number): Promise<number> {
    const next = { ...state, generation: state.generation + 1, updated_at: now };
    this.#storage.writeState(next);
    return this.#push(this.#fenceOf(next));
  }

  /** `state`'s fence, with the latest version of every resource (so shards answer "latest" exactly). */
  #fenceOf(state: PolicyState): AdmissionFence {
    const latest = Object.fromEntries(
      this.#storage.listResources().map(({ name, version }) => [name, version]),
    );
    return fenceOf(state, latest);
  }

  async #push(fence: AdmissionFence): Promise<number> {
    const counts = await Promise.all(
      this.#deps.shards.map(async (shard) => {
        for (let attempt = 1; ; attempt++) {
          try {
            return (await shard.apply(fence)).in_flight;
          } catch (error) {
            if (attempt >= PUSH_TRIES) throw error;
          }
        }
      }),
    );
    return counts.reduce((sum, n) => sum + n, 0);
  }

  async #liveCount(): Promise<number> {
    const counts = await Promise.all(this.#deps.shards.map((shard) => shard.inFlight()));
    return counts.reduce((sum, n) => sum + n, 0);
  }

  /** The fence in force: what a shard that never received a push asks for (no fan-out). */
  fence(): AdmissionFence {
    return this.#fenceOf(this.#storage.readState(this.#deps.now()));
  }

  /** Pushes the current fence to every shard again (after restoring state by hand, or a shard that missed a push). */
  async republish(): Promise<number> {
    return this.#push(this.fence());
  }

  /** The policy, sync state, live in-flight count (summed over the shards) and resources. */
  async snapshot(): Promise<PolicyView> {
    const state = this.#storage.readState(this.#deps.now());
    return {
      ...snapshotOf(state),
      syncing: state.syncing,
      in_flight: await this.#liveCount(),
      resources: this.#storage.listResources(),
      updated_at: state.updated_at,
    };
  }

  /** Replaces the given fields (sampling keys merge); never changes `policy_version`. */
  async update(patch: unknown): Promise<UpdateResult> {
    const parsed = PolicyUpdate.safeParse(patch);
    if (!parsed.success) {
      const errors: FieldIssue[] = parsed.error.issues.map((issue) => ({
        path: issue.path.map(String).join(".") || "(body)",
        message: issue.message,
      }));
      return { ok: false, reason: "invalid", errors };
    }
    const now = this.#deps.now();
    const state = this.#storage.readState(now);
    const { model, backend, sampling } = parsed.data;
    // Keys sent as undefined (possible over RPC) must not erase current values.
    const samplingChanges = Object.fromEntries(
      Object.entries(sampling ?? {}).filter(([, value]) => value !== undefined),
    );
    await this.#save(
      {
        ...state,
        model: model === undefined ? state.model : model,
        backend: backend === undefined ? state.backend : backend,
        sampling: { ...state.sampling, ...samplingChanges },
      },
      now,
    );
    return { ok: true, policy: await this.snapshot() };
  }

  /**
   * Marks a weight sync as under way and returns once every shard refuses new calls, with the
   * calls admitted before that still in flight. Calling it again is harmless (it pushes again).
   */
  async beginSync(
    requestedVersion?: number,
    mode: "drain" | "interrupt" = "drain",
  ): Promise<BeginSyncResult> {
    const now = this.#deps.now();
    const state = this.#storage.readState(now);
    const already = state.syncing !== null;
    const current = state.syncing === null ? null : (state.syncing.mode ?? "drain");
    // A drain sync's calls run to their end under the old version: cutting them now would not make it an interrupt sync.
    if (current === "drain" && mode === "interrupt")
      return {
        policy_version: state.policy_version,
        in_flight: await this.#liveCount(),
        already,
        conflict: "drain",
      };
    const requested = requestedVersion ?? state.syncing?.requested_version;
    const syncing = {
      since: state.syncing?.since ?? now,
      ...(requested === undefined ? {} : { requested_version: requested }),
      mode: current ?? mode,
    };
    const inFlight = await this.#save({ ...state, syncing }, now);
    return { policy_version: state.policy_version, in_flight: inFlight, already };
  }

  /**
   * Resolves once no admitted call is in flight in any shard or `timeoutMs` (at most 10 minutes)
   * has passed, re-counting every IDLE_POLL_MS.
   */
  async waitIdle(timeoutMs: number): Promise<WaitIdleResult> {
    const deadline = this.#deps.now() + Math.min(Math.max(0, timeoutMs), MAX_SYNC_WAIT_MS);
    for (;;) {
      const inFlight = await this.#liveCount();
      const now = this.#deps.now();
      if (inFlight === 0 || now >= deadline) return { in_flight: inFlight };
      await this.#sleep(Math.min(IDLE_POLL_MS, deadline - now));
    }
  }

  /** Ends a sync with the version of the weights now loaded, which must be newer than the current one. */
  async endSync(policyVersion: number): Promise<EndSyncResult> {
    const now = this.#deps.now();
    const state = this.#storage.readState(now);
    if (!state.syncing)
      return { ok: false, reason: "not_syncing", policy_version: state.policy_version };
    if (!(policyVersion > state.policy_version))
      return { ok: false, reason: "version_not_newer", policy_version: state.policy_version };
    await this.#save({ ...state, policy_version: policyVersion, syncing: null }, now);
    this.#storage.insertSync({
      policy_version: policyVersion,
      previous_version: state.policy_version,
      began_at: state.syncing.since,
      ended_at: now,
    });
    return { ok: true, policy_version: policyVersion, previous_version: state.policy_version };
  }

  /**
   * Ends the sync without a new version (the weights failed to load): calls are admitted again
   * under the version the sync began with, and calls an interrupt cut resume under it. Recorded as
   * a sync from that version to itself, so the run view still counts the time calls were refused.
   */
  async abortSync(): Promise<AbortSyncResult> {
    const now = this.#deps.now();
    const state = this.#storage.readState(now);
    if (!state.syncing)
      return { ok: false, reason: "not_syncing", policy_version: state.policy_version };
    await this.#save({ ...state, syncing: null }, now);
    this.#storage.insertSync({
      policy_version: state.policy_version,
      previous_version: state.policy_version,
      began_at: state.syncing.since,
      ended_at: now,
    });
    return { ok: true, policy_version: state.policy_version };
  }

  /** Weight syncs that ended and began in `[from, to)`, oldest first (at most `limit`, ≤ 1,000). */
  syncs(from: number, to: number, limit = 1_000): SyncRecord[] {
    return this.#storage.listSyncs(
      Number(from),
      Number(to),
      Math.min(Math.max(1, Number(limit) || 1), 1_000),
    );
  }

  /**
   * Stores `value` as the next version of resource `name` (earlier versions never change), then
   * pushes the new latest version to every admission shard before answering: rollouts and runner
   * claims read resources from their shard, so once this returns none of them gets the old one.
   */
  async putResource(name: string, value: unknown): Promise<PutResourceResult> {
    const checked = validateResource(name, value);
    if (!checked.ok) return checked;
    const now = this.#deps.now();
    const version = this.#deps.storage.transactionSync(() => {
      const next = this.#storage.latestVersion(name) + 1;
      this.#storage.insertResource(name, next, checked.json, now);
      return next;
    });
    await this.#save(this.#storage.readState(now), now);
    return { ok: true, name, version, id: resourceId(name, version) };
  }

  /** One version of resource `name`, the latest when `version` is omitted. */
  getResource(name: string, version?: number): GetResourceResult {
    const wanted = version ?? this.#storage.latestVersion(name);
    const record =
      Number.isInteger(wanted) && wanted >= 1
        ? this.#storage.readResource(name, wanted)
        : undefined;
    return record ? { ok: true, ...record } : { ok: false, reason: "not_found" };
  }
}
