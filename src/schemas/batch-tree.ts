/** @module A batch's tree sampling option: per root rollout, the steps it branches at and into how many children. */
import { z } from "zod";

/** Most children a tree node branches into (the fork route's bound). */
export const MAX_TREE_WIDTH = 64;
/** Most branch steps (levels below the root). */
export const MAX_TREE_LEVELS = 8;
/** Most rollouts one row's trees hold (n × nodes per tree): a row's slots stay a bounded fan-out. */
export const MAX_TREE_ROLLOUTS_PER_ROW = 1024;

/**
 * `tree: {branch_at: [k1, k2, …], width: w}`: each root rollout of a row is forked into `w`
 * children once it ended, at step k1 (they share its steps `0..k1-1`); each child is forked again
 * at k2, and so on. Every node runs to its own end (a parent is not stopped at its branch step),
 * and the `w` children of a node are one GRPO group, so a root's tree is 1 + w + w² + … groups
 * counting the row's own group of `n` roots.
 */
export const BatchTree = z
  .object({
    /** Steps to branch at, strictly increasing, each >= 1 (a branch at 0 shares nothing: that is `n`). */
    branch_at: z
      .array(z.int("branch_at must hold integers").min(1, "branch_at steps must be >= 1"))
      .min(1, "branch_at must hold at least one step")
      .max(MAX_TREE_LEVELS, `branch_at must hold at most ${MAX_TREE_LEVELS} steps`),
    /** Children per branching node, 1..64. */
    width: z
      .int("width must be an integer")
      .min(1, "width must be >= 1")
      .max(MAX_TREE_WIDTH, `width must be <= ${MAX_TREE_WIDTH}`),
  })
  .strict()
  .superRefine((tree, ctx) => {
    tree.branch_at.forEach((step, i) => {
      if (i > 0 && step <= tree.branch_at[i - 1]!)
        ctx.addIssue({
          code: "custom",
          path: ["branch_at", i],
          message: `branch_at must be strictly increasing (${step} after ${tree.branch_at[i - 1]})`,
        });
    });
  });
export type BatchTree = z.infer<typeof BatchTree>;

/** Rollouts in one root's tree: 1 + w + w² + … + w^m for m branch steps. */
export function treeNodes(tree: BatchTree | null | undefined): number {
  if (!tree) return 1;
  let level = 1;
  let total = 1;
  for (let depth = 0; depth < tree.branch_at.length; depth += 1) total += level *= tree.width;
  return total;
}
