/**
 * @module What the soak's feed delivered against what it had to: every group delivered once or
 * withheld with a reason, and each delivered group's members exactly its slots' final runs.
 *
 * Under injected faults some rollouts end as infrastructure failures: a batch re-runs their slot
 * (`<slot>.retry-<k>`) and a group that still holds one is withheld, reported in `dropped_groups`
 * (docs/verl.md). So a group is accounted for when it was delivered or reported withheld, and a
 * member id is expected only if it is its slot's final run in a delivered group.
 */
import type { SoakHttp } from "./soak-http";

/** A group as an inline pull returns it. */
interface PulledGroup {
  uid: string;
  members: Array<{
    rollout_id: string;
    sample_index: number;
    status?: string;
    outcome?: string;
    samples?: unknown[];
  }>;
}

/** One batch slot's run as the batch lists it. */
interface ListedRun {
  rollout_id: string;
  row_index: number;
  superseded: boolean;
  outcome: string | null;
}

/** A group of rollouts the soak created, with how each of its members ended. */
export interface ExpectedGroup {
  uid: string;
  batchId: string | null;
  /** The final run of each slot, and how it ended (`policy`, `infra`, `cut`, or null if it never did). */
  finalRuns: Array<{ rollout_id: string; outcome: string | null }>;
}

/** The feed's side of the soak report. */
export interface FeedAccounting {
  groupsExpected: number;
  groupsDelivered: number;
  /** Groups the feed withheld, by reason (infrastructure failure, cut, stale). */
  groupsWithheld: Record<string, number>;
  /** Expected groups neither delivered nor reported withheld, and delivered or withheld uids nobody expected. */
  groupsMissing: string[];
  groupsUnexpected: string[];
  /**
   * Delivered groups holding a member that is not a policy outcome (must be none): by the batch
   * listing's final runs, or by the outcome the feed itself delivered.
   */
  groupsWronglyDelivered: string[];
  /** Final runs of expected groups whose outcome never reached their batch tracker (must be none: the tracker lost track). */
  runsUnsettled: string[];
  /** Delivered groups with a failed-status member (a policy failure, e.g. a PolicyError). */
  groupsWithFailedMembers: number;
  /** Re-runs of slots that failed for infrastructure. */
  retriedSlots: number;
  membersExpected: number;
  membersDelivered: number;
  membersMissing: string[];
  membersUnexpected: string[];
  samplesDelivered: number;
  duplicateSamples: number;
  /**
   * Submitted slots (`<group uid>/<sample index>`, from what the soak submitted: rows × n, groups ×
   * 4) neither delivered in their group nor in a group reported withheld by uid (nor, for an
   * external group, which the feed reports withheld by count only, in a group the soak saw end
   * with a non-policy member). Must be none.
   */
  slotsUnaccounted: string[];
  /** External groups withheld that the feed counted but could not name (groups of no batch). */
  groupsWithheldByCount: number;
}

/** A group the soak submitted: its uid and how many slots it has. */
export interface SubmittedGroup {
  uid: string;
  size: number;
}

/**
 * How long the drain waits without a new group before it calls the rest missing. A result the
 * crash took from the local queue (Miniflare's queue is in memory) is re-sent at its session's
 * next delivery check, 15 s, 45 s and 105 s after it was published (DELIVERY_CHECK_DELAYS_MS): a
 * shorter wait reported groups missing that came 30-100 s later.
 */
export const DRAIN_PATIENCE_S = 120;

/** How long the soak waits for every batch run's result message (a session re-sends a lost one at 15 s, 45 s, 1 m 45 s, 3 m 45 s). */
export const SETTLE_MS = 240_000;

/**
 * Each batch's listing once every run in it is settled: its result message has reached the
 * tracker (`outcome` set). A run the tracker read back from its session after its message was
 * lost in a crash is terminal with no outcome yet: whether it is superseded, and its slot re-run,
 * is only known when the session's delivery check re-sends the message. A listing taken before
 * that names a final run the feed rightly never delivers. Gives up after SETTLE_MS (the unsettled
 * runs then show as missing members).
 */
async function settledListings(
  http: SoakHttp,
  batchIds: string[],
  settleMs: number,
): Promise<Map<string, ListedRun[]>> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    const listings = new Map<string, ListedRun[]>();
    for (const batchId of batchIds) {
      listings.set(
        batchId,
        (
          await http.json<{ rollouts?: ListedRun[] }>(
            `/v1/batches/${encodeURIComponent(batchId)}/rollouts?limit=1000`,
          )
        ).body.rollouts ?? [],
      );
    }
    const unsettled = [...listings.values()].flat().filter((run) => run.outcome === null).length;
    if (unsettled === 0 || Date.now() > deadline) return listings;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

/** The soak's batch groups and their slots' final runs, from each batch's settled listing. */
export async function batchGroups(
  http: SoakHttp,
  batchIds: string[],
  settleMs = SETTLE_MS,
): Promise<{ groups: ExpectedGroup[]; retried: number; ids: string[] }> {
  const groups: ExpectedGroup[] = [];
  const ids: string[] = [];
  let retried = 0;
  const listings = await settledListings(http, batchIds, settleMs);
  for (const batchId of batchIds) {
    const listed = listings.get(batchId) ?? [];
    const rows = new Map<number, ExpectedGroup>();
    for (const run of listed) {
      ids.push(run.rollout_id);
      if (run.superseded) {
        retried++;
        continue;
      }
      const group = rows.get(run.row_index) ?? {
        uid: `${batchId}:${run.row_index}`,
        batchId,
        finalRuns: [],
      };
      group.finalRuns.push({ rollout_id: run.rollout_id, outcome: run.outcome });
      rows.set(run.row_index, group);
    }
    groups.push(...rows.values());
  }
  return { groups, retried, ids };
}

/**
 * Drains the feed (pulls naming the soak's batches, so their withheld groups are reported, and
 * pulls of the external groups' uids) until every expected group is delivered or withheld, or
 * nothing more comes for DRAIN_PATIENCE_S, and compares by id.
 */
export async function drainAndAccount(
  http: SoakHttp,
  expected: ExpectedGroup[],
  externalPrefix: string,
  retriedSlots: number,
  submitted: SubmittedGroup[],
): Promise<FeedAccounting> {
  const batchIds = [
    ...new Set(expected.flatMap((group) => (group.batchId ? [group.batchId] : []))),
  ];
  const seenMembers = new Map<string, number>();
  const delivered = new Map<string, PulledGroup>();
  const withheld = new Map<string, string>();
  let samplesDelivered = 0;
  const accounted = (uid: string) => delivered.has(uid) || withheld.has(uid);
  // An external group (no batch) that is withheld is counted by the feed but never reported by uid.
  const mayBeWithheldSilently = (group: ExpectedGroup) =>
    group.batchId === null && group.finalRuns.some((run) => run.outcome !== "policy");
  const pending = () =>
    expected.filter((group) => !accounted(group.uid) && !mayBeWithheldSilently(group));
  const filters = [
    ...(batchIds.length > 0 ? [{ batch_id: batchIds }] : []),
    { uid_prefix: externalPrefix },
  ];
  for (let idle = 0; pending().length > 0 && idle < DRAIN_PATIENCE_S;) {
    let got = 0;
    for (const filter of filters) {
      const pulled = await http.json<{
        lease_id?: string | null;
        groups?: PulledGroup[];
        dropped_groups?: Array<{ uid: string; reason: string }>;
      }>("/v1/feed/pull", { max_groups: 8, lease_ms: 60_000, inline: true, ...filter });
      for (const dropped of pulled.body.dropped_groups ?? [])
        withheld.set(dropped.uid, dropped.reason);
      for (const group of pulled.body.groups ?? []) {
        got++;
        delivered.set(group.uid, group);
        for (const member of group.members) {
          seenMembers.set(member.rollout_id, (seenMembers.get(member.rollout_id) ?? 0) + 1);
          samplesDelivered += member.samples?.length ?? 0;
        }
      }
      if (pulled.body.lease_id) await http.json("/v1/feed/ack", { lease_id: pulled.body.lease_id });
    }
    if (got === 0) {
      idle++;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    } else idle = 0;
  }
  const expectedUids = new Set(expected.map((group) => group.uid));
  const deliveredExpected = expected.filter((group) => delivered.has(group.uid));
  const expectedMembers = new Set(
    deliveredExpected.flatMap((group) => group.finalRuns.map((run) => run.rollout_id)),
  );
  const expectedByUid = new Map(expected.map((group) => [group.uid, group]));
  const slotsUnaccounted: string[] = [];
  let groupsWithheldByCount = 0;
  for (const { uid, size } of submitted) {
    if (withheld.has(uid)) continue;
    const group = delivered.get(uid);
    const known = expectedByUid.get(uid);
    if (!group && known && mayBeWithheldSilently(known)) {
      groupsWithheldByCount++;
      continue;
    }
    const indexes = new Set(group?.members.map((member) => member.sample_index) ?? []);
    for (let index = 0; index < size; index++)
      if (!indexes.has(index)) slotsUnaccounted.push(`${uid}/${index}`);
  }
  const reasons: Record<string, number> = {};
  for (const reason of withheld.values()) reasons[reason] = (reasons[reason] ?? 0) + 1;
  return {
    groupsExpected: expected.length,
    groupsDelivered: delivered.size,
    groupsWithheld: reasons,
    groupsMissing: pending().map((group) => group.uid),
    groupsUnexpected: [...delivered.keys(), ...withheld.keys()].filter(
      (uid) => !expectedUids.has(uid),
    ),
    groupsWronglyDelivered: deliveredExpected
      .filter(
        (group) =>
          group.finalRuns.some((run) => run.outcome !== null && run.outcome !== "policy") ||
          delivered
            .get(group.uid)!
            .members.some((member) => member.outcome !== undefined && member.outcome !== "policy"),
      )
      .map((group) => group.uid),
    runsUnsettled: expected.flatMap((group) =>
      group.finalRuns.filter((run) => run.outcome === null).map((run) => run.rollout_id),
    ),
    groupsWithFailedMembers: [...delivered.values()].filter((group) =>
      group.members.some((member) => member.status !== undefined && member.status !== "succeeded"),
    ).length,
    retriedSlots,
    membersExpected: expectedMembers.size,
    membersDelivered: seenMembers.size,
    membersMissing: [...expectedMembers].filter((id) => !seenMembers.has(id)),
    membersUnexpected: [...seenMembers.keys()].filter((id) => !expectedMembers.has(id)),
    samplesDelivered,
    duplicateSamples: [...seenMembers.values()].reduce((sum, count) => sum + count - 1, 0),
    slotsUnaccounted,
    groupsWithheldByCount,
  };
}
