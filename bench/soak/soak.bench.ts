/**
 * @module `npm run soak`: 2,000 rollouts of every style under injected faults (20% of generation
 * requests: 5xx, 429, hangs, broken streams; and environment failures of the soak agents), five
 * crashes (SIGKILL) of the local stack and queue batches delivered twice at once to two
 * consumers; prints what was lost, duplicated, delivered and left unaccounted, and exits 1 on any.
 * Not part of `npm test` (it takes minutes); `test/e2e/soak.e2e.test.ts` runs a tiny one.
 * `FEED_SHARDS=4 npm run soak` runs it over a sharded trainer feed.
 */
import { availableParallelism } from "node:os";
import { freePort } from "../../tools/simulator/free-port";
import { runSoak } from "./run-soak";

const report = await runSoak({
  // 5 agents × 8 batches × 10 rows × n = 4, plus 100 external groups of 4: 2,000 slots.
  batchesPerAgent: 8,
  rowsPerBatch: 10,
  n: 4,
  externalGroups: 100,
  kills: 5,
  // 21% of generation requests draw a fault (so that a run's draw stays above 20%).
  faults: { rate5xx: 0.06, rate429: 0.04, rateTimeout: 0.05, rateMalformed: 0.06 },
  envFaultRate: 0.05,
  duplicateRate: 0.2,
  workerPort: await freePort(),
  timeoutMs: 40 * 60_000,
  log: (line) => console.error(`[soak] ${line}`),
});

const injectedTotal = Object.values(report.injected).reduce((a, b) => a + b, 0);
console.log(
  `${report.total} rollouts for ${report.submittedSlots} submitted slots (batches of n=4 over math, calculator, soak-function, soak-lit, soak-workflow; external groups with aborted streams) in ${report.seconds} s`,
);
console.log(
  `  injected faults:            ${JSON.stringify(report.injected)} = ${injectedTotal} of ${report.generationRequests} generation requests (${((100 * injectedTotal) / Math.max(1, report.generationRequests)).toFixed(1)}%)`,
);
console.log(`  environment faults:         ${report.envFaults} (the soak agents' own)`);
console.log(
  `  stack kills (SIGKILL):      ${report.kills}; queue deliveries doubled (two consumers at once): ${report.duplicatedDeliveries} messages`,
);
console.log(
  `  terminal with a reason:     ${report.terminalWithReason} / ${report.total}  ${JSON.stringify(report.byReason)}`,
);
console.log(
  `  lost:                       ${report.lost.length}${report.lost.length ? ` (${report.lost.slice(0, 5).join(", ")}…)` : ""}`,
);
const some = (ids: string[]) =>
  `${ids.length}${ids.length ? ` (${ids.slice(0, 5).join(", ")}${ids.length > 5 ? "…" : ""})` : ""}`;
console.log(
  `  groups expected/delivered:  ${report.groupsExpected} / ${report.groupsDelivered} (with policy failures: ${report.groupsWithFailedMembers}), withheld ${JSON.stringify(report.groupsWithheld)}; missing ${some(report.groupsMissing)}, unexpected ${some(report.groupsUnexpected)}, delivered with an infrastructure failure ${some(report.groupsWronglyDelivered)}`,
);
console.log(
  `  slots re-run (infra):       ${report.retriedSlots}; final runs whose outcome never reached their tracker: ${some(report.runsUnsettled)}`,
);
console.log(
  `  members expected/delivered: ${report.membersExpected} / ${report.membersDelivered}; missing ${some(report.membersMissing)}, unexpected ${some(report.membersUnexpected)}; samples delivered: ${report.samplesDelivered}`,
);
console.log(`  unanswered creates/finishes: ${some(report.requestFailures)}`);
console.log(`  duplicate samples:          ${report.duplicateSamples}`);
console.log(
  `  slots unaccounted:          ${some(report.slotsUnaccounted)} (of ${report.submittedSlots} submitted; external groups withheld by count: ${report.groupsWithheldByCount})`,
);
console.log(`  stopped on its deadline:    ${report.stoppedOnDeadline}`);
console.log(`  admissions in flight after: ${report.admissionsInFlight ?? "unknown"}`);
console.log(
  `  5xx answers seen:           ${report.fivexx} ${JSON.stringify(report.fivexxBy)} (requests that found the stack down: ${report.unreachable})`,
);
// Delivered groups and members are compared with the expected sets by id: a count can match while
// one group is missing and a stranger delivered in its place.
const ok =
  !report.stoppedOnDeadline &&
  report.lost.length === 0 &&
  report.duplicateSamples === 0 &&
  report.slotsUnaccounted.length === 0 &&
  report.groupsMissing.length === 0 &&
  report.groupsUnexpected.length === 0 &&
  report.groupsWronglyDelivered.length === 0 &&
  report.runsUnsettled.length === 0 &&
  report.membersMissing.length === 0 &&
  report.membersUnexpected.length === 0 &&
  report.requestFailures.filter(
    (failure) => failure.startsWith("batch") || failure.startsWith("create"),
  ).length === 0;
const faults = injectedTotal + report.envFaults;
console.log(
  `  ${(report.total / Math.max(1, report.seconds)).toFixed(2)} rollouts/s; wall ${report.seconds} s; three runs in a row take about ${Math.round((3 * report.seconds) / 60)} min on this machine (${availableParallelism()} cores)`,
);
console.log(
  `soak: ${report.total} rollouts, ${faults} faults, ${report.kills} kills, lost ${report.lost.length}, duplicates ${report.duplicateSamples}, unaccounted ${report.slotsUnaccounted.length}`,
);
process.exitCode = ok ? 0 : 1;
