/**
 * @module Picks the replica for one call by the backend's routing policy (routing-policies.ts):
 * `hash` keeps the rollout's own replica while it is healthy, otherwise rendezvous order with
 * bounded load; `prefix_hash` sends each call where its prompt prefix falls on a consistent-hash
 * ring; `least_loaded` and `sticky_least_loaded` weigh calls in flight. Every policy
 * skips unhealthy replicas until a lazy `/health` probe readmits them. All state is per backend
 * instance, hence per isolate.
 */
import type { ReplicaRouting } from "../../schemas/backend-config";
import { HashRing } from "./hash-ring";
import { PREFIX_HASH_CHARS } from "./prefix-key";
import { rendezvousOrder } from "./rendezvous";
import { replicaPaces } from "./replica-pace";
import { chooseReplica, leastLoaded, SLOW_REPLICA_PACE } from "./routing-policies";
import { DEFAULT_HEALTH_TIMING, type HealthTiming, ReplicaState } from "./replica-state";
import { replicaUrls } from "./replica-url";
import { StickyAssignments } from "./sticky-assignments";

/**
 * Calls a rollout may have made on a slow replica and still be moved off it (see
 * `#leavesSlowReplica`). Two, not one: every replica's first calls queue behind full-miss prefills
 * of the first wave, so after one call a slow but lightly placed replica can look as fast as the
 * busy ones (measured in bench:routing: 1.44x against a 1.5x line, and half a group stayed there
 * for all 8 turns); by the second the fast replicas' times have settled.
 */
const YOUNG_ROLLOUT_CALLS = 2;

/** How a call on a leased replica ended: success, a replica fault, or something that says nothing about the replica. */
export type CallOutcome = "ok" | "failed" | "neutral";

/** One call's hold on a replica; `release` exactly once. */
export interface ReplicaLease {
  /** OpenAI base of the replica (`…/v1`), reported as the call's replica. */
  readonly url: string;
  /** Server root (`/health`, `/tokenize`). */
  readonly root: string;
  /** Ends the call: "ok" keeps the rollout here, "failed" marks the replica unhealthy, "neutral" only frees the slot. */
  release(outcome: CallOutcome): void;
}

/** One replica's state for `ModelBackend.health()`. */
export interface ReplicaHealth {
  replica: string;
  healthy: boolean;
  in_flight: number;
}

/** Options of `ReplicaRouter`. */
export interface ReplicaRouterOptions {
  /** Bounded-load factor c: a new rollout skips a replica already at ⌈c·(in-flight total + 1)/healthy⌉. */
  loadFactor: number;
  now: () => number;
  /** Asks the replica whether it is up (`GET /health`); resolves true for a 2xx, never rejects. */
  probe: (replica: ReplicaState) => Promise<boolean>;
  timing?: Partial<HealthTiming>;
  /** Rollouts remembered without a hint. Default 10,000. */
  stickyCapacity?: number;
  /** Routing policy. Default `hash` (the `vllm` backend passes its config's, whose default is `sticky_least_loaded`). */
  routing?: ReplicaRouting;
}

/** Routes calls over a fixed list of replicas. */
export class ReplicaRouter {
  readonly #replicas: ReplicaState[];
  readonly #byUrl = new Map<string, ReplicaState>();
  readonly #sticky: StickyAssignments;
  /** Built on the first `prefix_hash` call, so routers under other policies never hash points. */
  #ring: HashRing<ReplicaState> | undefined;
  readonly #options: ReplicaRouterOptions;

  /** `urls` must be non-empty and distinct once normalised (the backend config checks both). */
  constructor(urls: readonly string[], options: ReplicaRouterOptions) {
    const timing = { ...DEFAULT_HEALTH_TIMING, ...options.timing };
    this.#replicas = urls.map((url) => new ReplicaState(url, timing));
    for (const replica of this.#replicas) this.#byUrl.set(replica.url, replica);
    this.#sticky = new StickyAssignments(options.stickyCapacity);
    this.#options = options;
  }

  /** Replica names (`…/v1`) in configuration order. */
  get urls(): string[] {
    return this.#replicas.map((replica) => replica.url);
  }

  /**
   * Leases the replica for one call of `rolloutId`. The rollout's own replica is `hint` (else the
   * one this isolate last saw it use), if healthy or readmitted by a probe. `hash` keeps it; else
   * it takes the rendezvous ranking of the rollout id with bounded load. `sticky_least_loaded`
   * keeps it within the bound, and ranks a new rollout by `prefixKey` (its prompt's prefix);
   * `least_loaded` ignores it; `prefix_hash` ignores it and load, placing every call by its
   * prefix's first `PREFIX_HASH_CHARS` on the ring (the next replica clockwise if that one is
   * down). Unhealthy replicas that rank above the first healthy one are probed; with every
   * replica unhealthy, the one that failed longest ago is used. Placement is synchronous unless a
   * probe runs, so concurrent first calls see each other's load.
   */
  async acquire(
    rolloutId: string,
    hint?: string | null,
    prefixKey?: (maxChars?: number) => string | null,
  ): Promise<ReplicaLease> {
    const routing = this.#options.routing;
    if (routing?.policy === "prefix_hash")
      return this.#firstUp(
        (this.#ring ??= new HashRing(this.#replicas)).order(
          prefixKey?.(PREFIX_HASH_CHARS) ?? rolloutId,
        ),
        rolloutId,
      );
    const remembered = this.#find(hint) ?? this.#find(this.#sticky.get(rolloutId));
    const kept =
      remembered &&
      routing?.policy !== "least_loaded" &&
      (remembered.healthy || (await this.#probeIfDue(remembered)))
        ? remembered
        : undefined;
    if (kept && (!routing || routing.policy === "hash")) return this.#lease(kept, rolloutId);
    const sticky = kept && this.#leavesSlowReplica(rolloutId, kept) ? undefined : kept;
    // A new rollout under sticky_least_loaded is placed by its prompt's prefix, so a group meets.
    const key =
      (!sticky && routing?.policy === "sticky_least_loaded" ? prefixKey?.() : null) ?? rolloutId;
    const ranked = rendezvousOrder(key, this.#replicas);
    await this.#probeAbove(ranked);
    if (!routing || routing.policy === "hash")
      return this.#lease(this.#pickBounded(ranked), rolloutId);
    const healthy = ranked.filter((replica) => replica.healthy);
    if (healthy.length === 0) return this.#lease(this.#longestFailed(ranked), rolloutId);
    const now = this.#options.now();
    // Pace decides where a rollout is placed and which replicas set the bound's floor.
    const pace =
      routing.policy === "sticky_least_loaded" ? replicaPaces(this.#replicas, now) : undefined;
    return this.#lease(
      chooseReplica(routing, {
        ranked: healthy,
        sticky,
        load: (replica) => replica.inFlight(now),
        pace,
      }),
      rolloutId,
    );
  }

  /** The replica a call of `rolloutId` would most likely use, without probing or counting load (for `/tokenize`). */
  peek(rolloutId: string, hint?: string | null): ReplicaState {
    const sticky = this.#find(hint) ?? this.#find(this.#sticky.get(rolloutId));
    if (sticky?.healthy) return sticky;
    const ranked = rendezvousOrder(rolloutId, this.#replicas);
    return ranked.find((replica) => replica.healthy) ?? (ranked[0] as ReplicaState);
  }

  /** Health and load of every replica as this isolate sees them. */
  health(): ReplicaHealth[] {
    const now = this.#options.now();
    return this.#replicas.map((replica) => ({
      replica: replica.url,
      healthy: replica.healthy,
      in_flight: replica.inFlight(now),
    }));
  }

  #find(url: string | null | undefined): ReplicaState | undefined {
    return url ? this.#byUrl.get(replicaUrls(url).api) : undefined;
  }

  /**
   * Under sticky_least_loaded, a rollout that has made at most `YOUNG_ROLLOUT_CALLS` calls on a
   * replica running markedly slow is placed again by its prefix (its group meets again on the
   * same next replica): the first rollouts are placed before any call has ended, so a quarter of
   * them land on a slow replica blind, and leaving early costs one cache miss where staying costs
   * every later turn. An older rollout stays: under noise, moving costs more than it saves.
   */
  #leavesSlowReplica(rolloutId: string, replica: ReplicaState): boolean {
    if (this.#options.routing?.policy !== "sticky_least_loaded") return false;
    const calls = this.#sticky.callsOn(rolloutId, replica.url);
    if (calls === undefined || calls > YOUNG_ROLLOUT_CALLS) return false;
    return replicaPaces(this.#replicas, this.#options.now())(replica) >= SLOW_REPLICA_PACE;
  }

  /** Probes the unhealthy replicas ranked above the first healthy one (see `acquire`). */
  async #probeAbove(ranked: readonly ReplicaState[]): Promise<void> {
    for (const replica of ranked) {
      if (replica.healthy || (await this.#probeIfDue(replica))) return;
    }
  }

  /** The first healthy replica of `ranked` (after probing those above it), else the one that failed longest ago. */
  async #firstUp(ranked: ReplicaState[], rolloutId: string): Promise<ReplicaLease> {
    await this.#probeAbove(ranked);
    const up = ranked.find((replica) => replica.healthy);
    return this.#lease(up ?? this.#longestFailed(ranked), rolloutId);
  }

  /** Bounded load over the healthy replicas in rendezvous order; least busy if all are at capacity. */
  #pickBounded(ranked: ReplicaState[]): ReplicaState {
    const now = this.#options.now();
    const healthy = ranked.filter((replica) => replica.healthy);
    if (healthy.length === 0) return this.#longestFailed(ranked);
    const total = healthy.reduce((sum, replica) => sum + replica.inFlight(now), 0);
    const capacity = Math.ceil((this.#options.loadFactor * (total + 1)) / healthy.length);
    const open = healthy.find((replica) => replica.inFlight(now) + 1 <= capacity);
    return open ?? leastLoaded(healthy, (replica) => replica.inFlight(now));
  }

  /** With every replica unhealthy: the one that failed longest ago (most likely back by now). */
  #longestFailed(ranked: ReplicaState[]): ReplicaState {
    return ranked.reduce((best, replica) =>
      replica.lastFailureAt < best.lastFailureAt ? replica : best,
    );
  }

  /**
   * Probes an unhealthy replica whose cooldown has passed, unless a probe is already running (a
   * concurrent call skips the replica rather than wait on another call's probe, which in Workers
   * may belong to another request's I/O context). Resolves whether the replica is now healthy.
   */
  async #probeIfDue(replica: ReplicaState): Promise<boolean> {
    if (!replica.probeDue(this.#options.now())) return false;
    const probing = this.#options.probe(replica).catch(() => false);
    replica.probing = probing;
    try {
      const ok = await probing;
      if (ok) replica.recordSuccess();
      else replica.recordFailure(this.#options.now());
      return ok;
    } finally {
      replica.probing = null;
    }
  }

  #lease(replica: ReplicaState, rolloutId: string): ReplicaLease {
    const id = replica.beginLease(this.#options.now());
    let released = false;
    return {
      url: replica.url,
      root: replica.root,
      release: (outcome) => {
        if (released) return;
        released = true;
        const startedAt = replica.endLease(id);
        if (outcome === "ok") {
          const now = this.#options.now();
          if (startedAt !== undefined) replica.recordCallTime(now - startedAt, now);
          replica.recordSuccess();
          this.#sticky.set(rolloutId, replica.url);
        } else if (outcome === "failed") {
          replica.recordFailure(this.#options.now());
        }
      },
    };
  }
}
