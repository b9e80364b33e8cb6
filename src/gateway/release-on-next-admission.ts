/**
 * @module A drive's admissions, one round trip per model call: a call's release is not sent on its
 * own but rides on the rollout's next admission, which releases it at its shard before admitting
 * the next call. A stepwise rollout asks for its next admission a few milliseconds after its
 * last call ended (the agent and the environment run, the step is committed), so of the two
 * requests per call to the shard (admit, release) one is left. A release waits at most
 * `RELEASE_GRACE_MS` for that: an environment that takes longer, or a drive that ends, sends it
 * on its own. A weight sync so waits for a finished call at most that much longer; it never
 * misses one still running (a release is only ever late, never early).
 */
import type { PolicyAdmission } from "../schemas/policy";
import type { PolicyPort } from "./policy-port";

/** Longest a finished call's release waits for the rollout's next admission before it is sent alone. */
export const RELEASE_GRACE_MS = 100;

/** Admission whose `acquire` can also release calls of the same rollout, at the same shard, first. */
export interface ReleasingPolicyPort extends PolicyPort {
  acquire(
    rolloutId: string,
    callId: string,
    ttlMs: number,
    releasing?: readonly string[],
  ): Promise<PolicyAdmission>;
}

/** A `PolicyPort` that holds releases back for the next admission; `flush` sends what still waits. */
export interface DeferredReleasePort extends PolicyPort {
  /** Sends every release still waiting and resolves once they have landed (a drive calls it before it ends). */
  flush(): Promise<void>;
  /**
   * Whether every call of `rolloutId` this port admitted is known released at its shard: none
   * waits, none's release failed, none's admission is in doubt (an `acquire` that threw may have
   * been applied). A drive that ends with this true spares its session the rollout-wide release.
   */
  releasedAll(rolloutId: string): boolean;
}

interface WaitingRelease {
  callId: string;
  settle: (result: Promise<{ policy_version: number }>) => void;
}

/**
 * Wraps `port` for one drive. `release` answers once the release has landed (with the version in
 * force then), as `PolicyPort.release` does; only later. The timers are the caller's so tests can
 * drive them.
 *
 * @example
 * const admissions = releaseOnNextAdmission(objects(env).admission());
 * const gateway = createGateway({ policy: admissions, ... });
 * // … the drive …
 * await admissions.flush();
 */
export function releaseOnNextAdmission(
  port: ReleasingPolicyPort,
  graceMs = RELEASE_GRACE_MS,
): DeferredReleasePort {
  const waiting = new Map<
    string,
    { releases: WaitingRelease[]; timer: ReturnType<typeof setTimeout> }
  >();

  // Calls admitted (or perhaps admitted) and not yet known released, by rollout.
  const open = new Map<string, Set<string>>();
  const opened = (rolloutId: string, callId: string) => {
    const calls = open.get(rolloutId);
    if (calls) calls.add(callId);
    else open.set(rolloutId, new Set([callId]));
  };
  const landed = (rolloutId: string, callId: string) => open.get(rolloutId)?.delete(callId);

  const take = (rolloutId: string): WaitingRelease[] => {
    const entry = waiting.get(rolloutId);
    if (!entry) return [];
    clearTimeout(entry.timer);
    waiting.delete(rolloutId);
    return entry.releases;
  };

  // Each release on its own, as the port would have sent it (idempotent: sending one twice is fine).
  const sendAlone = (rolloutId: string, releases: WaitingRelease[]): Promise<unknown> =>
    Promise.allSettled(
      releases.map((release) => {
        const sent = port.release(rolloutId, release.callId);
        release.settle(sent);
        return sent.then(() => landed(rolloutId, release.callId));
      }),
    );

  return {
    release(rolloutId, callId) {
      return new Promise((resolve, reject) => {
        let entry = waiting.get(rolloutId);
        if (!entry)
          waiting.set(
            rolloutId,
            (entry = {
              releases: [],
              timer: setTimeout(() => void sendAlone(rolloutId, take(rolloutId)), graceMs),
            }),
          );
        entry.releases.push({ callId, settle: (result) => void result.then(resolve, reject) });
      });
    },

    async acquire(rolloutId, callId, ttlMs) {
      const releases = take(rolloutId);
      let admission: PolicyAdmission;
      try {
        admission = await port.acquire(
          rolloutId,
          callId,
          ttlMs,
          releases.length > 0 ? releases.map((release) => release.callId) : undefined,
        );
      } catch (error) {
        // Whether the shard applied the admission is unknown: it counts as open. The releases
        // go again on their own.
        opened(rolloutId, callId);
        void sendAlone(rolloutId, releases);
        throw error;
      }
      // Applied before the admission was decided, admitted or not: the version in force then.
      for (const release of releases) {
        landed(rolloutId, release.callId);
        release.settle(Promise.resolve({ policy_version: admission.policy_version }));
      }
      // After them: a call cut and resumed releases and is admitted again under the same id.
      if (admission.ok) opened(rolloutId, callId);
      return admission;
    },

    async flush() {
      await Promise.all(
        [...waiting.keys()].map((rolloutId) => sendAlone(rolloutId, take(rolloutId))),
      );
    },

    releasedAll(rolloutId) {
      return !waiting.has(rolloutId) && (open.get(rolloutId)?.size ?? 0) === 0;
    },
  };
}
