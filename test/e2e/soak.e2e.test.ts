import { describe, expect, it } from "vitest";
import { runSoak } from "../../bench/soak/run-soak";
import { freePort } from "../../tools/simulator/free-port";

describe("the soak in a tiny configuration (end to end)", () => {
  it("ends every rollout with a reason and delivers every group once across a crash of the stack, under model and environment faults and deliveries doubled to two consumers at once", async () => {
    const report = await runSoak({
      batchesPerAgent: 1,
      rowsPerBatch: 1,
      n: 4,
      externalGroups: 1,
      kills: 1,
      faults: { rate5xx: 0.05, rate429: 0.05, rateTimeout: 0.02, rateMalformed: 0.05 },
      duplicateRate: 0.5,
      envFaultRate: 0.1,
      workerPort: await freePort(),
      timeoutMs: 240_000,
    });
    // 24 slots, plus a run for every slot re-run after an infrastructure failure.
    expect(report.total).toBe(24 + report.retriedSlots);
    expect(report.kills).toBe(1);
    expect(report.lost).toEqual([]);
    expect(report.terminalWithReason).toBe(report.total);
    expect(report.requestFailures.filter((failure) => !failure.startsWith("finish"))).toEqual([]);
    expect(report.groupsExpected).toBe(6);
    expect(report.groupsMissing).toEqual([]);
    expect(report.groupsUnexpected).toEqual([]);
    // Every group delivered carries policy outcomes only; the rest were reported withheld.
    expect(report.groupsWronglyDelivered).toEqual([]);
    expect(report.runsUnsettled).toEqual([]);
    expect(report.membersExpected).toBe(4 * report.groupsDelivered);
    expect(report.membersMissing).toEqual([]);
    expect(report.membersUnexpected).toEqual([]);
    expect(report.duplicateSamples).toBe(0);
    // Every submitted slot (6 rows/groups × 4) is delivered or in a group reported withheld.
    expect(report.submittedSlots).toBe(24);
    expect(report.slotsUnaccounted).toEqual([]);
    expect(report.stoppedOnDeadline).toBe(false);
    expect(report.admissionsInFlight).toBe(0);
    // Faults are injected upstream and the stack is killed, but neither may reach a client as a
    // 5xx: the gateway retries the model, and a down stack is no answer at all (counted apart).
    expect(report.fivexxBy).toEqual({});
    expect(report.fivexx).toBe(0);
  }, 400_000);
});
