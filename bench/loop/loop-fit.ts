/** @module bench:loop's `--fit-steps`: ours and the floor with publication at several steps per rollout, as the points cpu-fit splits. */
import type { StepPoint } from "./cpu-fit";
import { median } from "../kit/loop-report";
import type { OursRun } from "../kit/loop-ours";
import type { PublicationLike } from "../kit/workerd-floor";

/** How one point is measured: a round of ours at `steps` per rollout, and the floor's CPU per step publishing like it. */
export interface FitRounds {
  ours(steps: number): Promise<OursRun>;
  floor(steps: number, like: PublicationLike | undefined): Promise<number>;
  /** What the floor publishes to match a round of ours (its measured R2 objects and bytes). */
  like(run: OursRun): PublicationLike | undefined;
}

/**
 * For each step count, `rounds` alternating rounds of ours and the floor (each floor round
 * publishing as the round of ours before it did); the medians of ours' and the floor's CPU per step.
 */
export async function fitPoints(
  counts: readonly number[],
  rounds: number,
  measure: FitRounds,
): Promise<{ ours: StepPoint[]; floor: StepPoint[] }> {
  const ours: StepPoint[] = [];
  const floor: StepPoint[] = [];
  for (const steps of counts) {
    const oursCpu: number[] = [];
    const floorCpu: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const run = await measure.ours(steps);
      oursCpu.push(run.cpuPerStep);
      floorCpu.push(await measure.floor(steps, measure.like(run)));
    }
    ours.push({ steps, msPerStep: median(oursCpu) });
    floor.push({ steps, msPerStep: median(floorCpu) });
  }
  return { ours, floor };
}
