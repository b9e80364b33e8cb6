/**
 * @module The one staleness rule of the async training modes: how far the trainer's policy
 * version may be ahead of the oldest version among a sample's tokens. The feed applies it when a
 * trainer pulls a complete group (queue time included); a running rollout applies it whenever it
 * learns of a newer version (a call's admission, a weight sync reaching its session), so a rollout
 * that can no longer be trained is ended then, not generated to its end and dropped.
 */
import type { RolloutSpec } from "../schemas/rollout-api";
import { dataManagers, trainingModes } from "./training-modes";

/**
 * True when data whose oldest token came from policy version `oldestVersion` can no longer be
 * trained at `currentVersion` under `maxStaleness` (the training mode's k): `current - oldest > k`.
 * Versions only grow, so once true it stays true: a rollout for which it holds while it runs
 * could only be dropped when pulled. `oldestVersion` null (nothing generated yet) is never stale.
 *
 * @example
 * exceedsStaleness(5, 3, 1) // true: two versions behind, one allowed
 */
export function exceedsStaleness(
  currentVersion: number,
  oldestVersion: number | null,
  maxStaleness: number,
): boolean {
  return oldestVersion !== null && currentVersion - oldestVersion > maxStaleness;
}

/**
 * The staleness bound (the training mode's k) of a rollout whose results feed the trainer; null
 * when none applies: a rollout alone, `infer` data, an online session (its data carries its own
 * importance weights), an unknown mode.
 */
function stalenessBoundOf(spec: Pick<RolloutSpec, "group" | "online">): number | null {
  const group = spec.group;
  if (!group || spec.online) return null;
  if (!dataManagers.get(group.data_manager)?.feeds_trainer) return null;
  return trainingModes.get(group.training_mode)?.max_staleness ?? null;
}

/** Why a rollout was ended STALE, in words (its `error`). */
function staleMessage(
  spec: Pick<RolloutSpec, "group" | "online">,
  current: number,
  oldest: number,
): string {
  const mode = spec.group?.training_mode ?? "?";
  return `policy version ${current} is more than ${stalenessBoundOf(spec)} ahead of this rollout's oldest token (version ${oldest}, ${mode}): it could no longer be trained`;
}

/**
 * The rule applied to a rollout of `spec`: why its data can no longer be trained at `current` when
 * its oldest token came from `oldest`, or null while it still can (or no bound applies).
 */
export function staleReason(
  spec: Pick<RolloutSpec, "group" | "online">,
  current: number,
  oldest: number | null,
): string | null {
  const bound = stalenessBoundOf(spec);
  return bound !== null && oldest !== null && exceedsStaleness(current, oldest, bound)
    ? staleMessage(spec, current, oldest)
    : null;
}
