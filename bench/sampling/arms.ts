/** @module The three arms of `bench:sampling`, the batch each submits, and the order they run in. */
import type { MathRow } from "./sampling-runs";

/** plain: every row, every group; early-stop: cut at `target_groups`, no filter; filtered: DAPO's filter and the same cut. */
export const ARMS = ["plain", "early-stop", "filtered"] as const;
export type Arm = (typeof ARMS)[number];

/** What every arm shares: the rows, the group size, the concurrency, the target of the two cut arms. */
export interface ArmSettings {
  rows: MathRow[];
  n: number;
  target: number;
  maxConcurrent: number;
}

/**
 * The batch `arm` submits. All three hold the same rows (so the same sample keys and outcomes);
 * only `target_groups` and `filter` differ, so early-stop vs plain is the cut alone and filtered vs
 * early-stop the filter alone. The rows beyond `target` are the over-sampling reserve of both cut arms.
 */
export function armBatch(
  arm: Arm,
  batchId: string,
  settings: ArmSettings,
): { batch_id: string } & Record<string, unknown> {
  const common = {
    batch_id: batchId,
    agent: "math",
    mode: "train",
    n: settings.n,
    max_concurrent: settings.maxConcurrent,
    rows: settings.rows,
  };
  if (arm === "plain") return common;
  if (arm === "early-stop") return { ...common, target_groups: settings.target };
  return { ...common, target_groups: settings.target, filter: { metric: "reward" } };
}

/** Repeat `repeat`'s order: the arms rotated by one each repeat, so each runs first, second and last once in three. */
export function armOrder(repeat: number): Arm[] {
  return ARMS.map((_, index) => ARMS[(index + repeat) % ARMS.length]!);
}
