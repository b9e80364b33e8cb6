/** @module `bench:sampling`'s figures: per-arm medians and spreads over the repeats, the headline line, and the ratios. */
import type { SamplingOutcome } from "./sampling-runs";
import { median } from "../kit/latency-table";
import { ARMS, type Arm } from "./arms";

/** One timed repeat: each arm's outcome, every ratio taken within the repeat. */
export type Repeat = Record<Arm, SamplingOutcome>;

/** `median (min–max)` with `digits` decimals. */
function summary(values: readonly number[], digits: number): string {
  const f = (value: number) => value.toFixed(digits);
  return `${f(median(values))} (${f(Math.min(...values))}–${f(Math.max(...values))})`;
}

/** Groups with signal per minute of wall time. */
export function signalPerMinute(outcome: SamplingOutcome): number {
  return outcome.signalGroups / (outcome.wallMs / 60_000);
}

/** A one-line account of one batch, printed as it ends. */
export function batchLine(label: string, outcome: SamplingOutcome): string {
  const { engine } = outcome;
  return `${label}: ${(outcome.wallMs / 1000).toFixed(1)} s, ${outcome.deliveredGroups} groups delivered, ${outcome.signalGroups} with signal, ${outcome.uniformGroups} uniform complete, ${engine.generationTokens} tokens generated (${(engine.engineMs / 1000).toFixed(1)} s modelled engine time, ${engine.preemptions} preemptions), ${outcome.progress.counts.cancelled} rollouts cut, simulator idle ${(outcome.idleAfterMs / 1000).toFixed(1)} s after done`;
}

/** The summary over `repeats`: per arm, the headline, and what the filter adds over early stopping. */
export function reportLines(repeats: readonly Repeat[], target: number): string[] {
  const of = (arm: Arm, pick: (outcome: SamplingOutcome) => number) =>
    repeats.map((repeat) => pick(repeat[arm]));
  const ratio = (top: Arm, bottom: Arm) =>
    repeats.map((repeat) => signalPerMinute(repeat[top]) / signalPerMinute(repeat[bottom]));
  const rates = Object.fromEntries(ARMS.map((arm) => [arm, of(arm, signalPerMinute)])) as Record<
    Arm,
    number[]
  >;
  const spread = (values: number[]) =>
    `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
  const ratioLine = (values: number[]) =>
    `${median(values).toFixed(2)} (spread ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)} over ${repeats.length} repeats)`;
  const width = Math.max(...ARMS.map((arm) => arm.length));
  return [
    `per arm, median (min–max) over ${repeats.length} repeats:`,
    ...ARMS.map(
      (arm) =>
        `  ${arm.padEnd(width)}  wall ${summary(
          of(arm, (o) => o.wallMs / 1000),
          1,
        )} s, groups delivered ${summary(
          of(arm, (o) => o.deliveredGroups),
          0,
        )}, with signal ${summary(
          of(arm, (o) => o.signalGroups),
          0,
        )}, tokens generated ${summary(
          of(arm, (o) => o.engine.generationTokens),
          0,
        )}, modelled engine time ${summary(
          of(arm, (o) => o.engine.engineMs / 1000),
          1,
        )} s, tokens per group with signal ${summary(
          of(arm, (o) => o.engine.generationTokens / Math.max(o.signalGroups, 1)),
          0,
        )}`,
    ),
    `groups with signal per minute: plain ${median(rates.plain).toFixed(1)}, early-stop ${median(rates["early-stop"]).toFixed(1)}, filtered ${median(rates.filtered).toFixed(1)}`,
    `  spreads over ${repeats.length} repeats: plain ${spread(rates.plain)}, early-stop ${spread(rates["early-stop"])}, filtered ${spread(rates.filtered)}`,
    `what the filter adds over early stopping alone: filtered / early-stop ${ratioLine(ratio("filtered", "early-stop"))}`,
    `what early stopping adds over plain: early-stop / plain ${ratioLine(ratio("early-stop", "plain"))}; both together: filtered / plain ${ratioLine(ratio("filtered", "plain"))}`,
    `signal share of delivered groups (median): ${ARMS.map(
      (arm) =>
        `${arm} ${(median(of(arm, (o) => o.signalGroups / Math.max(o.deliveredGroups, 1))) * 100).toFixed(0)}%`,
    ).join(", ")}`,
    `delivered beyond target_groups ${target} (median): early-stop +${median(of("early-stop", (o) => o.deliveredGroups - target))}, filtered +${median(of("filtered", (o) => o.deliveredGroups - target))} (groups whose last members ended on their own before the cut's cancel reached them, their results still on the way; counted above, where a trainer that trims to the target, as verl's DapoBatches does, keeps ${target})`,
  ];
}
