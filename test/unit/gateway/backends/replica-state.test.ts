/** Unit: a replica's count of calls in flight, whose leases stop counting after their ttl. */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_HEALTH_TIMING,
  ReplicaState,
} from "../../../../src/gateway/backends/replica-state";

const TTL = 1_000;
const replica = () =>
  new ReplicaState("http://replica-a:8000/v1", { ...DEFAULT_HEALTH_TIMING, leaseTtlMs: TTL });

describe("ReplicaState.inFlight", () => {
  it("counts the leases not ended, and stops counting each once its ttl has passed", () => {
    const state = replica();
    const first = state.beginLease(0);
    state.beginLease(400);
    state.beginLease(800);
    expect(state.inFlight(900)).toBe(3);
    expect(state.endLease(first)).toBe(0);
    expect(state.inFlight(900)).toBe(2);
    // 1,400: the lease begun at 400 is 1,000 old; the one begun at 800 still counts.
    expect(state.inFlight(1_400)).toBe(1);
    expect(state.inFlight(1_800)).toBe(0);
  });

  it("still prunes every expired lease after the clock stepped back (leases no longer in start order)", () => {
    const state = replica();
    state.beginLease(5_000);
    state.beginLease(2_000); // a clock that went back 3 s
    state.beginLease(5_500);
    // At 3,100 only the lease begun at 2,000 is past its ttl, though it is not the oldest in the map.
    expect(state.inFlight(3_100)).toBe(2);
    expect(state.inFlight(6_000)).toBe(1);
    expect(state.inFlight(6_600)).toBe(0);
  });
});
