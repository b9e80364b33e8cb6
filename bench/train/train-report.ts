/**
 * @module What `npm run bench:train` prints: one line per mode and repeat, then per mode the
 * medians with their min–max over repeats, then the headline ratios (each repeat's ratio taken
 * within that repeat, then their median and spread), and the same-outcomes check.
 */
import { median } from "../kit/latency-table";
import type { ModeResult } from "./train-loop";

/** One mode's timed window with what the stack around it measured. */
export interface Measured extends ModeResult {
  repeat: number;
  /** Share of the window the generation units were busy (modelled engine time over modelled wall). */
  generationBusy: number;
  /** workerd's CPU over the window, in cores. */
  workerCores: number;
  /** The simulator processes' CPU over the window, in cores. */
  simulatorCores: number;
}

/** Trained tokens per wall second of the window. */
export const tokensPerS = (m: ModeResult): number => m.trainedTokens / (m.wallMs / 1000);
/** Trained samples per wall second of the window. */
export const samplesPerS = (m: ModeResult): number => m.trainedSamples / (m.wallMs / 1000);

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
const range = (values: number[], digits: number) =>
  `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
const summary = (values: number[], digits: number) =>
  `${median(values).toFixed(digits)} (${range(values, digits)})`;

/** One repeat's line for one mode. */
export function repeatLine(m: Measured): string {
  const waits = m.syncWaitsMs;
  return (
    `repeat ${m.repeat} ${m.name}: trained tokens/s ${tokensPerS(m).toFixed(1)}, samples/s ${samplesPerS(m).toFixed(2)}, ` +
    `tokens trained ${m.trainedTokens} discarded ${m.discardedTokens}, trainer busy ${pct(m.trainerBusy)}, ` +
    `generation units busy ${pct(m.generationBusy)}, sync wait p50 ${(median(waits) / 1000).toFixed(2)} s max ${(Math.max(0, ...waits) / 1000).toFixed(2)} s, ` +
    `staleness max ${m.stalenessMax}, wall ${(m.wallMs / 1000).toFixed(1)} s; workerd ${m.workerCores.toFixed(2)} cores, simulators ${m.simulatorCores.toFixed(2)}`
  );
}

/** Per mode, medians and min–max over the repeats. */
export function modeLines(results: Measured[], modes: string[]): string[] {
  return modes.map((name) => {
    const runs = results.filter((m) => m.name === name);
    const of = (f: (m: Measured) => number) => runs.map(f);
    return (
      `mode ${name} (median, min–max over ${runs.length}): trained tokens/s ${summary(of(tokensPerS), 1)}, ` +
      `samples/s ${summary(of(samplesPerS), 2)}, tokens discarded ${summary(
        of((m) => m.discardedTokens),
        0,
      )} ` +
      `of ${summary(
        of((m) => m.trainedTokens + m.discardedTokens),
        0,
      )} generated for the window, trainer busy ${summary(
        of((m) => 100 * m.trainerBusy),
        0,
      )}%, generation units busy ${summary(
        of((m) => 100 * m.generationBusy),
        0,
      )}%, ` +
      `workerd ${summary(
        of((m) => m.workerCores),
        2,
      )} cores`
    );
  });
}

/**
 * The headline, one line per non-hybrid mode: medians of trained tokens/s, and the median of the
 * per-repeat ratios (each computed within its repeat) with their spread.
 */
export function headlineLines(results: Measured[], baseline: string, modes: string[]): string[] {
  const base = results.filter((m) => m.name === baseline);
  return modes
    .filter((name) => name !== baseline)
    .map((name) => {
      const runs = results.filter((m) => m.name === name);
      const ratios = runs.flatMap((m) => {
        const same = base.find((b) => b.repeat === m.repeat);
        return same ? [tokensPerS(m) / tokensPerS(same)] : [];
      });
      return (
        `trained tokens/s: ${baseline} ${median(base.map(tokensPerS)).toFixed(1)}, ${name} ${median(runs.map(tokensPerS)).toFixed(1)}, ` +
        `ratio ${median(ratios).toFixed(2)} (spread ${range(ratios, 2)} over ${ratios.length} repeats); ` +
        `samples/s ratio ${median(runs.flatMap((m) => base.filter((b) => b.repeat === m.repeat).map((b) => samplesPerS(m) / samplesPerS(b)))).toFixed(2)}`
      );
    });
}

/** Compares every finished group's member lengths across runs: the same group index must have the same lengths. */
export function sameOutcomesLine(results: ModeResult[]): string {
  const reference = new Map<number, string>();
  let compared = 0;
  let differing = 0;
  for (const result of results)
    for (const [index, lengths] of result.lengths) {
      const key = lengths.join(",");
      const seen = reference.get(index);
      if (seen === undefined) reference.set(index, key);
      else {
        compared += 1;
        if (seen !== key) differing += 1;
      }
    }
  return `same outcomes: ${compared} finished groups compared with the first run that finished them, ${differing} differed in a member's length (${reference.size} distinct groups)`;
}
