import { describe, expect, it } from "vitest";
import { headline, type PolicyRun, policyRun, ratio } from "../../../bench/routing/routing-report";
import type { RoutingPolicyName } from "../../../src/schemas/backend-config";

/** A run of `calls` calls over `wallS` seconds whose groups took `groupS` seconds each. */
function run(
  policy: RoutingPolicyName,
  repeat: number,
  wallS: number,
  groupS: number[],
): PolicyRun {
  const result = {
    calls: 100,
    wallMs: wallS * 1000,
    ttftMs: [],
    groupMs: groupS.map((s) => s * 1000),
    groupReplicas: [],
    maxReplicaLoad: 0,
    callsPerReplica: new Map(),
  };
  const counters = { queries: 0, hits: 0, preemptions: 0, chatCalls: [] };
  return policyRun("slow-replica", policy, repeat, result, counters);
}

describe("bench:routing's report", () => {
  it("prints the issue's headline: median calls/s with its range, then the median group p90", () => {
    const runs = [run("hash", 0, 10, [4, 5]), run("hash", 1, 5, [2, 3]), run("hash", 2, 4, [8, 9])];
    expect(headline("", runs)).toBe(
      "slow-replica hash: calls/s 20.0 (10.0–25.0), group p90 5.0 s (3.0–9.0)",
    );
  });

  it("takes a ratio within each repeat, then its median and range", () => {
    const byPolicy = new Map<RoutingPolicyName, PolicyRun[]>([
      [
        "sticky_least_loaded",
        [run("sticky_least_loaded", 0, 5, [1]), run("sticky_least_loaded", 1, 2, [1])],
      ],
      ["least_loaded", [run("least_loaded", 1, 5, [1]), run("least_loaded", 0, 10, [1])]],
    ]);
    const calls = (r: PolicyRun) => r.callsPerSecond;
    expect(ratio(byPolicy, "sticky_least_loaded", "least_loaded", calls)).toBe("2.25x (2.00–2.50)");
    expect(ratio(byPolicy, "sticky_least_loaded", "hash", calls)).toBeNull();
  });
});
