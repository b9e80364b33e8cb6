/**
 * @module What a streamed call keeps durably while it runs, so that a generation survives its
 * owner's restart (a deploy restarts every Durable Object): the chat chunks received so far, kept
 * in batches at a bounded cadence (one write per batch, never one per token), with the version of
 * each run of tokens. After a restart the call continues from the kept ids (resumable-stream.ts's
 * `seed`), so at most one batch's tokens are generated twice.
 */
import type { VersionRun } from "./interruptible";

/** When a batch is written: after `tokens` tokens arrived since the last one, or `ms` passed with any pending. */
export interface ProgressCadence {
  tokens: number;
  ms: number;
}

/**
 * The cadence the session uses. 128 tokens: a batch row of ~128 chunks is ~30 KB (far under the
 * ~2 MB SQLite value limit), and `npm run bench:keep` measured one batch at ~1 ms of the object's
 * time, 0.05% of 128 tokens of decode at 20 ms a token, where a row per token costs ~86 times as
 * much (a write per chunk event); a restart then regenerates fewer than 128 tokens (a few seconds
 * of one sequence's decode) per call. 2 s bounds what a slow stream (long prefills, tool-heavy
 * output) can lose in wall time.
 */
export const DEFAULT_PROGRESS_CADENCE: ProgressCadence = { tokens: 128, ms: 2_000 };

/** One batch: the chunks (chat `data:` payloads, as the caller got them) since the last, and the call's state after them. */
export interface ProgressBatch {
  payloads: string[];
  /** Completion tokens in `payloads`. */
  tokens: number;
  runs: VersionRun[];
  interrupted: number;
}

/** Where batches go (the session's `call_flight_chunks` table); synchronous, as a Durable Object's SQLite is. */
export interface ProgressSink {
  cadence: ProgressCadence;
  keep(batch: ProgressBatch): void;
  /**
   * A batch could not be kept: what was kept before is dropped, so a restart runs the call again
   * whole rather than resume from kept chunks with a gap in them.
   */
  abandon(): void;
}

/** Collects a stream's chunks and hands them to the sink at its cadence. */
export class ProgressTap {
  readonly #sink: ProgressSink;
  readonly #now: () => number;
  #payloads: string[] = [];
  #tokens = 0;
  #since: number;
  #abandoned = false;

  constructor(sink: ProgressSink, now: () => number = Date.now) {
    this.#sink = sink;
    this.#now = now;
    this.#since = now();
  }

  /** A chunk the caller was sent, carrying `tokens` completion tokens. */
  add(payload: string, tokens: number): void {
    this.#payloads.push(payload);
    this.#tokens += tokens;
  }

  /** Writes the pending batch when the cadence says so (tokens, or time with tokens pending). */
  maybeKeep(runs: VersionRun[], interrupted: number): void {
    if (this.#tokens === 0 || this.#abandoned) return;
    const { tokens, ms } = this.#sink.cadence;
    if (this.#tokens < tokens && this.#now() - this.#since < ms) return;
    const batch = { payloads: this.#payloads, tokens: this.#tokens, runs, interrupted };
    this.#payloads = [];
    this.#tokens = 0;
    this.#since = this.#now();
    try {
      this.#sink.keep(batch);
    } catch (error) {
      // Keeping progress is insurance: a failed write costs the call a whole run after a
      // restart (kept chunks with a gap would continue from the wrong ids), never the call itself.
      console.error("keeping a call's progress failed; it would restart whole", String(error));
      this.#abandoned = true;
      try {
        this.#sink.abandon();
      } catch (again) {
        console.error("dropping a call's kept progress failed", String(again));
      }
    }
  }
}
