/** @module The Durable Object that admits and counts model calls for a slice of the rollouts: typed RPC over AdmissionShardCore. */
import { DurableObject } from "cloudflare:workers";
import {
  AdmissionShardCore,
  type AdmissionFence,
  type AdmissionShardApi,
  type ApplyResult,
} from "../src/runtime/policy";
import { installSurface, objects } from "../src/runtime/objects";
import { CountingSql, RequestCounter, type RequestCounts } from "../src/runtime";

/** The methods installed from the table below; the class writes out the rest of AdmissionShardApi. */
type Installed = Omit<AdmissionShardApi, "apply" | "requestCounts">;

/** The installed methods, as TypeScript sees them (the class still `implements` the whole interface). */
export interface AdmissionShard extends Installed {}

/**
 * One of `ADMISSION_SHARDS` objects named `admission-<k>`: every model call of the rollouts that
 * hash to it is admitted and released here, so no model call reaches a deployment-wide object.
 * The policy object pushes its fence here before a change is answered.
 */
export class AdmissionShard extends DurableObject<Env> implements AdmissionShardApi {
  readonly #core: AdmissionShardCore;
  readonly #requests = new RequestCounter();
  readonly #sql: CountingSql;
  /** The generation of the last sync or version fence passed on to the sessions (each is passed on once). */
  #interruptedAt = -1;
  /** The newest version the sessions here were checked at (a sync checks at the version it ends at). */
  #checkedAt = -1;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const policy = objects(env).policy();
    this.#sql = new CountingSql(ctx.storage.sql);
    this.#core = new AdmissionShardCore({
      sql: this.#sql,
      now: () => Date.now(),
      fetchFence: () => policy.fence(),
      fetchResource: (name, version) => policy.getResource(name, version),
    });
  }

  static {
    installSurface<AdmissionShard, Installed>(AdmissionShard, (s) => s.#requests, {
      acquire: (s, callId, ttlMs, rolloutId, releasing) =>
        s.#core.acquire(callId, ttlMs, rolloutId, releasing),
      releaseRollout: (s, rolloutId) => s.#core.releaseRollout(rolloutId),
      policySnapshot: (s) => s.#core.policySnapshot(),
      resource: (s, name) => s.#core.resource(name),
      release: (s, callId) => s.#core.release(callId),
      inFlight: (s) => s.#core.inFlight(),
    });
  }

  /**
   * Takes the policy's fence (if newer) and reports the calls in flight. A new sync fence, or a
   * newer policy version, is passed on to the session of every rollout with a call in flight here
   * (this shard knows them all): an `interrupt` sync cuts their plain calls, and every one of them
   * applies the staleness rule at the version the sync will end at (at least one newer), so a
   * rollout that could no longer be trained ends STALE and the sync does not wait for its calls.
   */
  apply(fence: AdmissionFence): ApplyResult {
    this.#requests.count("apply");
    const before = this.#core.heldVersion();
    const result = this.#core.apply(fence);
    if (result.generation !== fence.generation || this.#interruptedAt >= fence.generation)
      return result;
    const version = fence.snapshot.policy_version;
    const checkAt = fence.syncing ? version + 1 : version;
    // A version the sync that ended at it already had checked is not passed on again: admissions
    // wait during a sync, so the calls in flight now were all in flight then.
    const advanced =
      !fence.syncing && before !== undefined && version > before && version > this.#checkedAt;
    if (!fence.syncing && !advanced) return result;
    this.#interruptedAt = fence.generation;
    this.#checkedAt = Math.max(this.#checkedAt, checkAt);
    // Not awaited: the policy answers once every shard holds the fence, and its wait for calls in
    // flight sees the cut calls release (each session cuts them within milliseconds of hearing).
    const sessions = objects(this.env);
    this.ctx.waitUntil(
      Promise.all(
        this.#core.liveRolloutVersions().map(async ({ rollout_id: rolloutId, version: since }) => {
          const session = sessions.session(rolloutId);
          // A call still generating holds tokens from the version it was admitted under (`since`),
          // which its session learns only when the call is recorded.
          await (
            fence.syncing && fence.interrupt
              ? session.interruptCalls(version, since)
              : session.staleCheck(checkAt, since)
          ).catch((error: unknown) =>
            console.error("admission shard: telling", rolloutId, "of the sync failed", error),
          );
        }),
      ),
    );
    return result;
  }

  /** Requests this object served and the SQLite rows it read and wrote since it started (benchmarks read it; not persisted). */
  requestCounts(): RequestCounts {
    return { ...this.#requests.read(), sql: this.#sql.read() };
  }
}
