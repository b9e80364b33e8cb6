/**
 * @module The outcome advantage verl gives each member of one GRPO group, re-stated from
 * `compute_grpo_outcome_advantage` (verl/trainer/ppo/core_algos.py at the commit pinned in
 * docs/verl.md): scores are grouped by uid; a group of one has mean 0 and std 1, a larger one
 * `torch.mean` and `torch.std` (unbiased, n − 1); GRPO divides by `std + epsilon` (1e-6),
 * Dr.GRPO (`norm_adv_by_std_in_grpo: false`) only subtracts the mean.
 */

/** verl's `epsilon` default in compute_grpo_outcome_advantage. */
export const GRPO_EPSILON = 1e-6;

/** The group's mean and std as verl uses them, and each score's GRPO and Dr.GRPO advantage. */
export interface GroupAdvantages {
  mean: number;
  std: number;
  grpo: number[];
  drgrpo: number[];
}

/** Advantages of one group's `scores` (see the module doc); an empty group gives empty lists. */
export function grpoAdvantages(scores: readonly number[]): GroupAdvantages {
  const n = scores.length;
  let mean = 0;
  let std = 1;
  if (n > 1) {
    mean = scores.reduce((sum, s) => sum + s, 0) / n;
    std = Math.sqrt(scores.reduce((sum, s) => sum + (s - mean) ** 2, 0) / (n - 1));
  }
  return {
    mean,
    std,
    grpo: scores.map((s) => (s - mean) / (std + GRPO_EPSILON)),
    drgrpo: scores.map((s) => s - mean),
  };
}
