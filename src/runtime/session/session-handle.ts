/** @module What a driver calls on a rollout session (a Durable Object stub satisfies it). */
import type { RpcSurface } from "../../rpc-surface";
import type { RolloutSessionApi } from "./session-api";

/**
 * The driver's view of one rollout session: these methods of its RPC surface. The attempt engines
 * also count attempts (`beginAttempt`), extend the lease while a long attempt is alive
 * (`renewLease`) and read an attempt's calls (`attemptCalls`, a workflow's sample when it returns
 * no messages); emitters append spans (`addEvents`); `amendCallVersion` sets a stored call's
 * `policy_version_end` when its release reported a newer version than it was admitted under.
 */
export type SessionHandle = RpcSurface<
  Pick<
    RolloutSessionApi,
    | "lease"
    | "commitStep"
    | "amendCallVersion"
    | "finish"
    | "handoff"
    | "beginAttempt"
    | "renewLease"
    | "addEvents"
    | "attemptCalls"
  >
>;

/** Finds the session of a rollout by id. */
export interface SessionLocator {
  get(rolloutId: string): SessionHandle;
}
