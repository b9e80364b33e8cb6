/**
 * @module The replica choice of each routing policy, as pure functions of the healthy replicas
 * and their load (calls in flight as this isolate sees them). `ReplicaRouter` handles health,
 * probes and leases; this file only decides. See docs/scale.md, "Replica routing".
 */
import type { ReplicaRouting } from "../../schemas/backend-config";

/** What a policy sees of one replica. */
export interface RoutedReplica {
  readonly url: string;
}

/** One placement decision's inputs. */
export interface RoutingChoice<R extends RoutedReplica> {
  /** Healthy replicas, best-first in the rendezvous order of the call's key (`prefixKey`, else the rollout id). Non-empty. */
  ranked: readonly R[];
  /** The replica the rollout used last, if healthy; undefined for a new rollout. */
  sticky: R | undefined;
  /** Calls in flight on a replica now (not counting the one being placed). */
  load(replica: R): number;
  /** How much slower the replica's recent calls were than the typical (median) replica's (≥ 1; replica-pace.ts). Absent: all alike. Only `sticky_least_loaded` reads it. */
  pace?(replica: R): number;
}

/**
 * A new rollout's first choice is passed over when that replica's calls run this much slower
 * than the typical (median) replica's. A group placed there waits for it at every turn, while a
 * replica's cache luck alone moves its call time by far less (a cached 3k-token prefix saves
 * ~0.14 s of a ~0.6 s call in the routing bench).
 */
export const SLOW_REPLICA_PACE = 1.5;

/** The least-loaded replica; ties go to the earliest in `ranked` (the key's rendezvous order), so they stay deterministic. */
export function leastLoaded<R extends RoutedReplica>(
  ranked: readonly R[],
  load: (replica: R) => number,
): R {
  let best = ranked[0]!;
  let bestLoad = load(best);
  for (const replica of ranked) {
    const value = load(replica);
    if (value < bestLoad) {
      best = replica;
      bestLoad = value;
    }
  }
  return best;
}

/**
 * `sticky_least_loaded`: the rollout's own replica while its load is within `bound` of the
 * least-loaded one's, else the least-loaded replica. A new rollout goes to the first replica in
 * its key's rendezvous order that is within the same bound and not markedly slower than the
 * typical replica (`SLOW_REPLICA_PACE`), so calls with one prompt prefix (a GRPO group) meet where it is
 * cached, in every isolate alike, and a group does not wait at every turn on a slow replica.
 * "Least-loaded" means among the replicas that are not markedly slow: a slow replica takes no new
 * or leaving rollouts, so its load stays low, and as the floor it would put every other replica
 * over the bound and send the rollouts leaving them to the slow one (measured in bench:routing:
 * groups spread over 3-4 replicas, 8-11 of their 64 calls on the slow one).
 */
export function stickyLeastLoaded<R extends RoutedReplica>(
  choice: RoutingChoice<R>,
  bound: number,
): R {
  const pace = choice.pace ?? (() => 1);
  const usable = choice.ranked.filter((replica) => pace(replica) < SLOW_REPLICA_PACE);
  const targets = usable.length > 0 ? usable : choice.ranked;
  const least = leastLoaded(targets, choice.load);
  const floor = choice.load(least);
  const within = (replica: R) => choice.load(replica) - floor <= bound;
  // A rollout that leaves its overloaded replica goes where the load is least: it will miss the
  // cache anywhere. One on a slow replica stays within the bound: moving it would cost its cache
  // (tried: under load, call-time noise moved rollouts between equal replicas, hits fell 9 points);
  // the router moves only young ones (replica-router.ts).
  if (choice.sticky) return within(choice.sticky) ? choice.sticky : least;
  // The key's first usable replica within the bound: members that spill past an overloaded (or
  // slow) first choice still meet on the same second one, in every isolate alike.
  return targets.find(within) ?? least;
}

/**
 * The replica for a call under `routing` (`hash` is decided by the router's bounded-load rule,
 * not here). `least_loaded` ignores stickiness: every call goes where the fewest calls run.
 */
export function chooseReplica<R extends RoutedReplica>(
  routing: ReplicaRouting,
  choice: RoutingChoice<R>,
): R {
  if (routing.policy === "least_loaded") return leastLoaded(choice.ranked, choice.load);
  return stickyLeastLoaded(choice, routing.bound);
}
