/**
 * @module Tree slots of a batch (`tree: {branch_at, width}`): how a node's slot is named, which
 * GRPO group it belongs to, which children it releases when it ends, and the spec of a child
 * forked from its parent's run. Pure: the tracker's fan-out calls it.
 *
 * A root keeps the slot `<batch>:<row>:<sample>`; the i-th child of a node forked at step k
 * appends `.t<k>-<i>` to the node's slot (`b:0:1.t1-0.t3-1`), and a member retry appends
 * `.retry-<a>` to a slot as it does for any slot. Children are named after their parent's slot,
 * never its run, so a node whose parent was re-run keeps its ids; the run it was forked from is
 * the slot's `parent_id`. The children of a node forked at k share the group uid
 * `<parent slot>.t<k>` (size `width`); roots keep the row's group `<batch>:<row>` (size `n`).
 */
import type { RolloutGroup } from "../../schemas/rollout-group";
import type { RolloutSpec } from "../../schemas/rollout-api";
import type { AgentDefinition } from "../../sdk/agent-registry";
import { type ForkSourceResult, planFork } from "../session";
import { baseSlotId, groupUid, type BatchRecord, type RolloutSlot } from "./batch-state";

/** One branch on a node's path from its root: the step forked at and which child it is. */
export interface TreeBranch {
  step: number;
  index: number;
}

const BRANCH = /\.t([0-9]+)-([0-9]+)/g;

/** The branches from the root down to the slot of `rolloutId` ([] for a root). */
export function treePath(rolloutId: string): TreeBranch[] {
  const base = baseSlotId(rolloutId);
  // The batch id may hold anything; the part after the last colon is `<sample>` plus the branches.
  const tail = base.slice(base.lastIndexOf(":") + 1);
  return [...tail.matchAll(BRANCH)].map((match) => ({
    step: Number(match[1]),
    index: Number(match[2]),
  }));
}

/** Where the slot's run counts: its group uid, its place in the group and the group's size. */
export function slotGroup(
  record: Pick<BatchRecord, "batch_id" | "n" | "tree">,
  slot: RolloutSlot,
): { uid: string; sample_index: number; group_size: number } {
  const path = treePath(slot.rollout_id);
  const last = path.at(-1);
  if (!last || !record.tree)
    return {
      uid: groupUid(record.batch_id, slot.row_index),
      sample_index: slot.sample_index,
      group_size: record.n,
    };
  const base = baseSlotId(slot.rollout_id);
  const parentSlot = base.slice(0, base.length - `.t${last.step}-${last.index}`.length);
  return {
    uid: `${parentSlot}.t${last.step}`,
    sample_index: last.index,
    group_size: record.tree.width,
  };
}

/** The roots of a batch (released by index; `total` also counts every tree node). */
export function rootSlots(record: Pick<BatchRecord, "rows" | "n">): number {
  return record.rows * record.n;
}

/** The children `parent` (a finished run of a node) releases: none below the last branch step. */
export function childSlots(record: Pick<BatchRecord, "tree">, parent: RolloutSlot): RolloutSlot[] {
  const depth = treePath(parent.rollout_id).length;
  const step = record.tree?.branch_at[depth];
  if (!record.tree || step === undefined) return [];
  const base = baseSlotId(parent.rollout_id);
  return Array.from({ length: record.tree.width }, (_, index) => ({
    rollout_id: `${base}.t${step}-${index}`,
    row_index: parent.row_index,
    sample_index: parent.sample_index,
    attempt: 0,
    parent_id: parent.rollout_id,
  }));
}

/** Every slot below `slot` (its children, theirs, …): what a node that cannot be forked never gets. */
export function subtreeSlots(record: Pick<BatchRecord, "tree">, slot: RolloutSlot): RolloutSlot[] {
  return childSlots(record, slot).flatMap((child) => [child, ...subtreeSlots(record, child)]);
}

/** The step a tree child is forked at (its last branch). */
export function branchStepOf(slot: RolloutSlot): number {
  const last = treePath(slot.rollout_id).at(-1);
  if (!last) throw new Error(`${slot.rollout_id} is a root, not a tree child`);
  return last.step;
}

/**
 * The spec of a tree child forked from its parent's run (`source`, read at the branch step): the
 * fork route's plan for one child, in the batch's group for the node instead of a `fork:` group.
 * A refusal (the parent ended before the branch step) is permanent: the parent is terminal.
 */
export function planTreeChild(input: {
  source: Extract<ForkSourceResult, { ok: true }>;
  definition: AgentDefinition | undefined;
  slot: RolloutSlot;
  group: RolloutGroup;
  now: number;
}): { ok: true; spec: RolloutSpec } | { ok: false; message: string } {
  const { slot, group } = input;
  const body = { at_step: branchStepOf(slot), n: 1, train_shared_prefix: false };
  const plan = planFork({
    source: input.source,
    definition: input.definition,
    body,
    childIds: [slot.rollout_id],
    now: input.now,
  });
  if (!plan.ok)
    return { ok: false, message: plan.problems.map((p) => `${p.path}: ${p.message}`).join("; ") };
  const child = plan.children[0]!;
  return {
    ok: true,
    spec: { ...child, group, tree: { ...child.tree!, branch_index: group.sample_index } },
  };
}
