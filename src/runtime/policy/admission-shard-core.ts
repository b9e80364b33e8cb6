/**
 * @module One admission shard: admits and counts model calls for the rollouts hashed to it,
 * under the fence the policy object pushed last.
 */
import type { Clock, SqlPort } from "../../ports";
import type { PolicyAdmission, PolicySnapshot } from "../../schemas/policy";
import { CREATE_META_TABLE, readMetaText, writeMetaText } from "../meta-table";
import { AdmissionFence } from "./admission-fence";
import { InFlightTable, IN_FLIGHT_MIGRATIONS, migrateLegacyInFlight } from "./in-flight-table";
import type { GetResourceResult, ReleaseResult } from "./policy-results";
import { ResourceVersionCache, type FetchResourceVersion } from "./resource-cache";

/** Seconds a refused call is told to wait while weights sync (the gateway's Retry-After). */
export const SYNC_RETRY_AFTER_S = 1;
/** Longest an admitted call counts as in flight without a release (a dead invocation's call). */
export const MAX_CALL_TTL_MS = 3_600_000;
/** While syncing, a shard re-reads the policy's fence at most this often (heals a lost `sync/end` push). */
const REFRESH_WHILE_SYNCING_MS = 1_000;

/** What a shard needs from its Durable Object. */
export interface AdmissionShardDeps {
  sql: SqlPort;
  now: Clock;
  /** Reads the policy object's current fence (a shard that never received a push asks once). */
  fetchFence: () => Promise<AdmissionFence>;
  /** Reads one exact version of a named resource from the policy object. */
  fetchResource: FetchResourceVersion;
}

/** What `apply` reports back to the policy object: the fence kept and the calls admitted before it. */
export interface ApplyResult {
  generation: number;
  in_flight: number;
}

/**
 * Admission for a slice of the deployment's rollouts. Every decision is one synchronous step of
 * a single-writer object, so a call is either admitted before a sync's fence arrives (and then
 * counted until released) or refused after it: `sync/begin`, which pushes the fence to every
 * shard and sums their counts, can never miss a call admitted under the old version.
 */
export class AdmissionShardCore {
  readonly #sql: SqlPort;
  readonly #deps: AdmissionShardDeps;
  readonly #calls: InFlightTable;
  #fence: AdmissionFence | undefined;
  #refreshedAt = 0;
  /** The fence read under way, shared by every call that arrives meanwhile (one read per need, not one per call). */
  #fetching: Promise<void> | undefined;
  readonly #resources: ResourceVersionCache;

  constructor(deps: AdmissionShardDeps) {
    this.#deps = deps;
    this.#sql = deps.sql;
    for (const statement of [CREATE_META_TABLE, ...IN_FLIGHT_MIGRATIONS]) this.#sql.exec(statement);
    migrateLegacyInFlight(this.#sql);
    this.#calls = new InFlightTable(this.#sql);
    this.#resources = new ResourceVersionCache(deps.fetchResource);
    const stored = readMetaText(this.#sql, "fence");
    this.#fence = stored === undefined ? undefined : AdmissionFence.parse(JSON.parse(stored));
  }

  /** Keeps `fence` if it is newer than the one held; reports the fence kept and the live calls. */
  apply(fence: AdmissionFence): ApplyResult {
    const parsed = AdmissionFence.parse(fence);
    // The same generation read again replaces a fence stored before fences listed resources.
    const listsResources =
      parsed.generation === this.#fence?.generation &&
      this.#fence.resources === undefined &&
      parsed.resources !== undefined;
    if (!this.#fence || parsed.generation > this.#fence.generation || listsResources) {
      writeMetaText(this.#sql, "fence", JSON.stringify(parsed));
      this.#fence = parsed;
    }
    return {
      generation: this.#fence.generation,
      in_flight: this.#calls.countLive(this.#deps.now()),
    };
  }

  /** The policy version of the fence held (undefined before the first). */
  heldVersion(): number | undefined {
    return this.#fence?.snapshot.policy_version;
  }

  /** The rollouts with calls in flight here, each with the oldest version those calls were admitted under. */
  liveRolloutVersions(): Array<{ rollout_id: string; version: number }> {
    return this.#calls.liveRolloutVersions(this.#deps.now());
  }

  /** Calls admitted and neither released nor expired. */
  inFlight(): number {
    return this.#calls.countLive(this.#deps.now());
  }

  /** The fence held; read from the policy object when there is none, when `force`d, or now and then while syncing. */
  async #currentFence(force = false): Promise<AdmissionFence> {
    const now = this.#deps.now();
    const stale =
      this.#fence?.syncing === true && now - this.#refreshedAt >= REFRESH_WHILE_SYNCING_MS;
    if (!this.#fence || stale || force) {
      this.#refreshedAt = now;
      // A push may land while this read is under way; `apply` keeps whichever is newer.
      this.#fetching ??= this.#deps
        .fetchFence()
        .then((fence) => void this.apply(fence))
        .finally(() => (this.#fetching = undefined));
      await this.#fetching;
    }
    return this.#fence!;
  }

  /**
   * Admits one call and counts it for `ttlMs`, or refuses it while weights sync. Idempotent by
   * `callId`: a call admitted before the sync began is admitted again (it is already counted).
   * `rolloutId` lets `releaseRollout` drop the call with the rest of its rollout's. `releasing`
   * are earlier calls that have ended (a drive's releases ride on its next admission): they are
   * released first, whether this call is admitted or refused, so a sync that refuses the new call
   * stops waiting for the ended ones.
   */
  async acquire(
    callId: string,
    ttlMs: number,
    rolloutId?: string,
    releasing?: readonly string[],
  ): Promise<PolicyAdmission> {
    if (typeof callId !== "string" || callId === "")
      throw new TypeError("callId must be a non-empty string");
    if (!Number.isFinite(ttlMs) || ttlMs <= 0)
      throw new RangeError("ttlMs must be a positive number");
    if (
      releasing !== undefined &&
      (!Array.isArray(releasing) || releasing.some((id) => typeof id !== "string" || id === ""))
    ) {
      throw new TypeError("releasing must be a list of non-empty call ids");
    }
    for (const ended of releasing ?? []) this.#calls.delete(ended);
    const fence = await this.#currentFence();
    const now = this.#deps.now();
    if (fence.syncing) {
      if (this.#calls.isLive(callId, now)) return { ok: true, ...fence.snapshot };
      return {
        ok: false,
        reason: "syncing",
        retry_after_s: SYNC_RETRY_AFTER_S,
        policy_version: fence.snapshot.policy_version,
      };
    }
    this.#calls.upsert(
      callId,
      now + Math.min(ttlMs, MAX_CALL_TTL_MS),
      fence.snapshot.policy_version,
      rolloutId ?? null,
    );
    return { ok: true, ...fence.snapshot };
  }

  /**
   * The policy as this shard enforces it (the fence the policy object pushed last; a shard that
   * never got one asks once). What a runner's claim answers with, so a claim, like a model call,
   * reaches no deployment-wide object.
   */
  async policySnapshot(): Promise<PolicySnapshot> {
    return (await this.#currentFence()).snapshot;
  }

  /**
   * The latest version of resource `name` as the policy object pushed it with its fence (it
   * pushes a new fence before a `PUT /v1/resources/:name` is answered), its value read from the
   * policy object once per version. Rollouts and runner claims read resources here, so reading
   * them reaches no deployment-wide object per rollout. A fence stored before fences listed
   * resources is read again first.
   */
  async resource(name: string): Promise<GetResourceResult> {
    let fence = await this.#currentFence();
    if (fence.resources === undefined) fence = await this.#currentFence(true);
    const version = fence.resources?.[name];
    if (version === undefined) return { ok: false, reason: "not_found" };
    return this.#resources.get(name, version);
  }

  /** Ends an in-flight call (unknown ids are fine) and reports the version in force now. */
  release(callId: string): ReleaseResult {
    this.#calls.delete(callId);
    return { policy_version: this.#fence?.snapshot.policy_version ?? 0 };
  }

  /**
   * Ends every call of `rolloutId` still counted: its rollout has ended, or its driver lost the
   * lease (a crashed invocation), so none of them can be committed any more, and a weight sync
   * must not wait the admissions' ttl out. Returns how many were dropped.
   */
  releaseRollout(rolloutId: string): number {
    return this.#calls.deleteRollout(rolloutId);
  }
}
