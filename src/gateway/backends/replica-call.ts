/** @module Runs one upstream call on a leased replica and settles the lease from how it ended. */
import { ModelError } from "../../errors";
import type { CallOutcome, ReplicaLease } from "./replica-router";
import { holdUntilBodyEnds } from "./upstream-stream";

/**
 * What a failed call says about its replica. A connection error or 5xx means the replica is in
 * trouble; a 4xx, 429 or malformed body means it is up; the caller's own abort says nothing.
 */
export function callOutcome(error: unknown, signal?: AbortSignal): CallOutcome {
  if (signal?.aborted || !(error instanceof ModelError)) return "neutral";
  if (error.upstreamStatus === null) return "failed";
  return error.upstreamStatus >= 500 ? "failed" : "neutral";
}

/** Runs `call` against the leased replica; the lease is released when it settles. */
export async function callOnReplica<T>(
  lease: ReplicaLease,
  signal: AbortSignal | undefined,
  call: (lease: ReplicaLease) => Promise<T>,
): Promise<T> {
  try {
    const value = await call(lease);
    lease.release("ok");
    return value;
  } catch (error) {
    lease.release(callOutcome(error, signal));
    throw error;
  }
}

/** Opens a stream on the leased replica; the lease stays held (in flight) until the body ends. */
export async function openOnReplica(
  lease: ReplicaLease,
  signal: AbortSignal | undefined,
  open: (lease: ReplicaLease) => Promise<Response>,
): Promise<Response> {
  let response: Response;
  try {
    response = await open(lease);
  } catch (error) {
    lease.release(callOutcome(error, signal));
    throw error;
  }
  return holdUntilBodyEnds(response, (failed) =>
    lease.release(failed && !signal?.aborted ? "failed" : "ok"),
  );
}
