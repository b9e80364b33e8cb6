/** Unit: a tree batch's slots (names, groups, children, retries), the tree option's validation and a tree child's fork plan. */
import { describe, expect, it } from "vitest";
import { BatchMessage } from "../../../../src/schemas/batch";
import { treeNodes } from "../../../../src/schemas/batch-tree";
import { RolloutSpec } from "../../../../src/schemas/rollout-api";
import {
  batchOfGroupUid,
  retrySlot,
  type RolloutSlot,
} from "../../../../src/runtime/batch/batch-state";
import {
  childSlots,
  planTreeChild,
  slotGroup,
  subtreeSlots,
  treePath,
} from "../../../../src/runtime/batch/tree-slots";
import type { ForkSourceResult } from "../../../../src/runtime/session/fork";
import type { AgentDefinition } from "../../../../src/sdk/agent-registry";

const record = { batch_id: "b:x", n: 2, tree: { branch_at: [1, 3], width: 2 } };
const root: RolloutSlot = { rollout_id: "b:x:4:1", row_index: 4, sample_index: 1 };
const stepwise = { kind: "stepwise", engine: "stepwise" } as unknown as AgentDefinition;

function message(tree: unknown, extra: Record<string, unknown> = {}) {
  return BatchMessage.safeParse({
    batch_id: "b",
    agent: "a",
    n: 2,
    rows: [{ prompt: "p", reward_model: { ground_truth: null } }],
    tree,
    ...extra,
  });
}

function paths(result: ReturnType<typeof message>): string[] {
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join("."));
}

describe("tree slots", () => {
  it("names children after the parent's slot, one level per branch step, and stops below the last", () => {
    const children = childSlots(record, root);
    expect(children).toEqual(
      [0, 1].map((i) => ({
        rollout_id: `b:x:4:1.t1-${i}`,
        row_index: 4,
        sample_index: 1,
        attempt: 0,
        parent_id: "b:x:4:1",
      })),
    );
    const grandchildren = childSlots(record, children[1]!);
    expect(grandchildren.map((slot) => slot.rollout_id)).toEqual([
      "b:x:4:1.t1-1.t3-0",
      "b:x:4:1.t1-1.t3-1",
    ]);
    expect(treePath(grandchildren[1]!.rollout_id)).toEqual([
      { step: 1, index: 1 },
      { step: 3, index: 1 },
    ]);
    expect(childSlots(record, grandchildren[0]!)).toEqual([]);
    expect(subtreeSlots(record, root)).toHaveLength(treeNodes(record.tree) - 1);
    expect(childSlots({ tree: null }, root)).toEqual([]);
  });

  it("keeps a re-run parent's children ids and forks them from the run that finished", () => {
    const rerun = retrySlot(childSlots(record, root)[0]!, 2);
    expect(rerun).toMatchObject({
      rollout_id: "b:x:4:1.t1-0.retry-2",
      attempt: 2,
      parent_id: "b:x:4:1",
    });
    expect(childSlots(record, rerun).map((slot) => [slot.rollout_id, slot.parent_id])).toEqual([
      ["b:x:4:1.t1-0.t3-0", rerun.rollout_id],
      ["b:x:4:1.t1-0.t3-1", rerun.rollout_id],
    ]);
  });

  it("puts roots in the row's group of n and each node's children in one group of width, retries included", () => {
    expect(slotGroup(record, root)).toEqual({ uid: "b:x:4", sample_index: 1, group_size: 2 });
    const [first, second] = childSlots(record, root);
    expect([slotGroup(record, first!), slotGroup(record, second!)]).toEqual([
      { uid: "b:x:4:1.t1", sample_index: 0, group_size: 2 },
      { uid: "b:x:4:1.t1", sample_index: 1, group_size: 2 },
    ]);
    const deep = retrySlot(childSlots(record, second!)[1]!, 1);
    expect(slotGroup(record, deep)).toEqual({
      uid: "b:x:4:1.t1-1.t3",
      sample_index: 1,
      group_size: 2,
    });
    // Node groups are the batch's, like its row groups (callers may not add members to them).
    expect(
      [slotGroup(record, root).uid, slotGroup(record, first!).uid, slotGroup(record, deep).uid].map(
        batchOfGroupUid,
      ),
    ).toEqual(["b:x", "b:x", "b:x"]);
    expect(batchOfGroupUid("b:x:4:1.t1-1")).toBeUndefined();
    expect(treeNodes(record.tree)).toBe(7);
    expect(treeNodes({ branch_at: [1], width: 3 })).toBe(4);
  });

  it("validates the tree option, naming the field", () => {
    expect(message({ branch_at: [1, 3], width: 2 }).success).toBe(true);
    expect(paths(message({ branch_at: [2, 2], width: 2 }))).toEqual(["tree.branch_at.1"]);
    expect(paths(message({ branch_at: [0], width: 2 }))).toEqual(["tree.branch_at.0"]);
    expect(paths(message({ branch_at: [1], width: 65 }))).toEqual(["tree.width"]);
    expect(paths(message({ branch_at: [1], width: 0 }))).toEqual(["tree.width"]);
    expect(paths(message({ branch_at: [], width: 2 }))).toEqual(["tree.branch_at"]);
    expect(paths(message({ branch_at: [1, 2, 3], width: 16 }))).toEqual(["tree"]);
    expect(paths(message({ branch_at: [1], width: 2 }, { target_groups: 1 }))).toEqual([
      "target_groups",
    ]);
  });
});

describe("planTreeChild", () => {
  const parentSpec = RolloutSpec.parse({
    rollout_id: "b:x:4:1",
    agent: "a",
    task: { problem: "p" },
    config: { max_steps: 5, seed: 3 },
    created_at: 1,
  });
  const source = (
    step_count: number,
    status: "succeeded" | "running" = "succeeded",
  ): Extract<ForkSourceResult, { ok: true }> => ({
    ok: true,
    spec: parentSpec,
    status,
    step_count,
    last_step_done: false,
    prefix: null,
  });
  const child = childSlots(record, root)[1]!;
  const group = {
    ...slotGroup(record, child),
    batch_id: "b:x",
    training_mode: "verl/hybrid",
    data_manager: "train",
    attempt: 0,
    max_member_retries: 2,
    signal_filter: null,
    on_infra_failure: "withhold" as const,
  };

  it("forks the child at its branch step into the batch's node group, with its tree place and its own seed", () => {
    const planned = planTreeChild({
      source: source(3),
      definition: stepwise,
      slot: child,
      group,
      now: 9,
    });
    expect(planned.ok).toBe(true);
    const spec = planned.ok ? planned.spec : undefined;
    expect(spec).toMatchObject({
      rollout_id: "b:x:4:1.t1-1",
      group: { uid: "b:x:4:1.t1", sample_index: 1, group_size: 2, batch_id: "b:x" },
      tree: {
        root: "b:x:4:1",
        parent: "b:x:4:1",
        branch_step: 1,
        path: ["b:x:4:1", "b:x:4:1.t1-1"],
        branch_index: 1,
      },
    });
    expect(spec!.config.seed).not.toBe(3);
  });

  it("refuses a parent that ended before the branch step, and an agent that cannot fork", () => {
    const early = planTreeChild({
      source: source(0),
      definition: stepwise,
      slot: child,
      group,
      now: 9,
    });
    expect(early).toMatchObject({ ok: false, message: expect.stringContaining("at_step") });
    const attempts = planTreeChild({
      source: source(3),
      definition: { kind: "function", engine: "function" } as unknown as AgentDefinition,
      slot: child,
      group,
      now: 9,
    });
    expect(attempts).toMatchObject({
      ok: false,
      message: expect.stringContaining("only stepwise agents"),
    });
  });
});
