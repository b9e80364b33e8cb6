/** @module Showing a submission's progress: a live bar on a terminal, plain lines otherwise. */
import cliProgress from "cli-progress";
import { formatDuration, formatNumber } from "./format";
import type { Output } from "./output";
import { finishedOf, rewardMean, type ProgressTally } from "./progress-tally";

/** One look at the progress, with the rate the watcher measured. */
export interface ProgressFrame {
  tally: ProgressTally;
  elapsedMs: number;
  rate: number;
  etaMs: number | null;
}

/** Something that shows progress frames until stopped. */
export interface ProgressView {
  update(frame: ProgressFrame): void;
  /** Leaves the terminal clean for the next line (the bar stays visible). */
  stop(): void;
}

/** Plain lines repeat at least this often even when nothing changed, so a log shows the run is alive. */
const HEARTBEAT_MS = 15_000;

/** The counts after the bar: `ok 38 failed 2 running 6 queued 10 | reward 0.625 | 5.2 rollouts/s | ETA 5.0s`. */
export function describeFrame(frame: ProgressFrame): string {
  const { tally } = frame;
  const counts = `ok ${tally.succeeded} failed ${tally.failed}${tally.cancelled ? ` cancelled ${tally.cancelled}` : ""} running ${tally.running} queued ${tally.queued + tally.not_released}`;
  const eta = frame.etaMs === null ? "?" : formatDuration(frame.etaMs);
  return `${counts}${signalPart(tally)} | reward ${formatNumber(rewardMean(tally))} | ${frame.rate.toFixed(1)} rollouts/s | ETA ${eta}`;
}

/** ` | groups 12/16 filtered 3 withheld 1 cut 2 stale 1 cancelled 2 refilled 3 retried 4`: only what happened (nothing for a plain batch without failures). */
function signalPart(tally: ProgressTally): string {
  const { groups } = tally;
  const parts = [
    groups.target !== null
      ? `groups ${groups.delivered}/${groups.target}`
      : groups.filtered + groups.withheld + groups.cut > 0
        ? `groups ${groups.delivered}`
        : "",
    groups.filtered ? `filtered ${groups.filtered}` : "",
    groups.withheld ? `withheld ${groups.withheld}` : "",
    groups.cut ? `cut ${groups.cut}` : "",
    // Lost to the staleness rule: dropped when pulled, or cancelled while they ran; and refilled.
    groups.stale ? `stale ${groups.stale}` : "",
    groups.cancelled ? `cancelled ${groups.cancelled}` : "",
    groups.refilled ? `refilled ${groups.refilled}` : "",
    tally.retried ? `retried ${tally.retried}` : "",
  ].filter((part) => part !== "");
  return parts.length > 0 ? ` | ${parts.join(" ")}` : "";
}

/** One plain progress line: `[12.3s] 40/64 done (62%) ok 38 failed 2 …`. */
export function progressLine(frame: ProgressFrame): string {
  const done = finishedOf(frame.tally);
  const total = frame.tally.rollouts;
  const percent = total === 0 ? 100 : Math.floor((done * 100) / total);
  return `[${formatDuration(frame.elapsedMs)}] ${done}/${total} done (${percent}%) ${describeFrame(frame)}`;
}

/** Prints a line when the counts change, and a heartbeat line every 15 s. */
class LineView implements ProgressView {
  #lastKey = "";
  #lastAt = 0;
  readonly #out: Output;
  constructor(out: Output) {
    this.#out = out;
  }

  update(frame: ProgressFrame): void {
    const { tally } = frame;
    const key = `${finishedOf(tally)}/${tally.rollouts}/${tally.running}/${tally.queued}`;
    if (key === this.#lastKey && frame.elapsedMs - this.#lastAt < HEARTBEAT_MS) return;
    this.#lastKey = key;
    this.#lastAt = frame.elapsedMs;
    this.#out.note(progressLine(frame));
  }

  stop(): void {}
}

/** cli-progress's single bar on stderr, redrawn in place. */
class BarView implements ProgressView {
  readonly #bar = new cliProgress.SingleBar(
    {
      format: "{bar} {value}/{total} | {details}",
      stream: process.stderr,
      hideCursor: true,
      barsize: 30,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  #started = false;

  update(frame: ProgressFrame): void {
    const payload = { details: describeFrame(frame) };
    if (!this.#started) {
      this.#bar.start(frame.tally.rollouts, finishedOf(frame.tally), payload);
      this.#started = true;
      return;
    }
    this.#bar.setTotal(frame.tally.rollouts);
    this.#bar.update(finishedOf(frame.tally), payload);
  }

  stop(): void {
    if (this.#started) this.#bar.stop();
    this.#started = false;
  }
}

/** A bar when stderr is a terminal, plain lines when it is not, nothing with --json. */
export function createProgressView(out: Output): ProgressView {
  if (out.json) return { update() {}, stop() {} };
  return out.interactive ? new BarView() : new LineView(out);
}
