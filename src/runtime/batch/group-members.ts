/**
 * @module What the batch tracker keeps of a group's members and verdict: types shared by the row
 * groups' storage (batch-storage.ts) and the tree nodes' (tree-storage.ts), here so neither
 * imports the other.
 */
import type { MemberOutcome } from "../../schemas/member-outcome";
import type { TerminationReason } from "../../schemas/termination";

/** What became of a complete group: a GroupVerdict's kind, or its withholding reason. */
export type StoredVerdict =
  "deliver" | "deliver_valid" | "cut" | "cancelled" | "infra_failure" | "no_signal";

/** A finished member of a group, as its result reported it. */
export interface FinishedMember {
  rollout_id: string;
  sample_index: number;
  attempt: number;
  termination_reason: TerminationReason | null;
  outcome: MemberOutcome | null;
  metric: number | null;
  reward: number | null;
}
