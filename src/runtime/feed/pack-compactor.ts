/**
 * @module When a feed shard compacts its packs, and the compaction itself: the shard records where
 * the results consumer packed its groups, and once enough span bytes have come in (or packs stop
 * coming) it rewrites the ready groups' small packs into one (pack-compaction.ts plans which),
 * one compaction at a time, running on after the RPC call that started it.
 */
import { ARROW_STREAM_MEDIA_TYPE } from "../../sink/formats/arrow/arrow-format";
import { ARROW_EOS } from "../../sink/formats/arrow/arrow-ipc";
import { streamSpans } from "../../sink/publication/r2-span-stream";
import {
  COMPACTION_LIMITS,
  planCompaction,
  QUIET_COMPACTION_MS,
  type CompactionPlan,
} from "./pack-compaction";
import type { PackIndex, PackRef } from "./pack-index";

/** What a compactor works with, each given explicitly by the object that owns it. */
export interface PackCompactorDeps {
  /** The shard's `group_packs` table. */
  packs: PackIndex;
  /** Where the packs are (the Worker's `TRAJECTORIES`). */
  bucket: R2Bucket;
  /** The config's `pack_compaction_min_bytes`, read at each record (0 turns compaction off). */
  minBytes: () => number;
  /** Keeps the object alive while a compaction runs past the call that started it (`ctx.waitUntil`). */
  keepAlive: (work: Promise<unknown>) => void;
  /** Called once per compaction written (the object counts it as a request). */
  onCompaction: () => void;
  now: () => number;
  newId: () => string;
}

/** A feed shard's pack refs and their compaction: records refs, and compacts when one is due. */
export class PackCompactor {
  readonly #deps: PackCompactorDeps;
  /** Span bytes recorded since compaction last looked (it looks again past the threshold). */
  #recordedBytes = 0;
  /** The compaction running, if any: one at a time per shard. */
  #compacting: Promise<void> | null = null;
  /** Fires once no pack has been recorded for QUIET_COMPACTION_MS: a batch's tail is compacted then. */
  #quietTimer: ReturnType<typeof setTimeout> | undefined;
  /** A threshold asked for while a compaction ran (the quiet timer's), taken up when it ends. */
  #deferredMinBytes: number | null = null;

  constructor(deps: PackCompactorDeps) {
    this.#deps = deps;
  }

  /** Records where the results consumer packed groups of this shard, and compacts if that makes one due. */
  record(refs: Array<{ uid: string } & PackRef>): void {
    this.#deps.packs.record(refs, this.#deps.now());
    this.#recordedBytes += refs.reduce((n, ref) => n + (ref.span?.length ?? 0), 0);
    const minBytes = this.#deps.minBytes();
    if (minBytes === 0) return;
    if (this.#recordedBytes >= minBytes) this.#compactSoon(minBytes);
    // Below the threshold a batch's last groups would stay scattered: once packs stop coming, any
    // two reads' worth is compacted.
    clearTimeout(this.#quietTimer);
    this.#quietTimer = setTimeout(() => this.#compactSoon(1), QUIET_COMPACTION_MS);
  }

  /**
   * Starts a compaction of the ready groups' small packs if one is due and none runs; it goes on
   * after the call that started it returns (kept alive), and looks again when done.
   */
  #compactSoon(minBytes: number): void {
    if (this.#compacting !== null) {
      this.#deferredMinBytes = Math.min(this.#deferredMinBytes ?? minBytes, minBytes);
      return;
    }
    this.#recordedBytes = 0;
    const plan = planCompaction(this.#deps.packs.readySpannedRefs(), this.#deps.newId, {
      ...COMPACTION_LIMITS,
      minBytes,
    });
    if (!plan) return;
    this.#compacting = this.#compact(plan)
      .then(
        (moved) => moved > 0,
        (error: unknown) => {
          // Not retried until more packs are recorded: a failing R2 must not become a busy loop.
          console.warn("pack compaction failed; pulls read the small packs", {
            key: plan.key,
            error: error instanceof Error ? error.message : String(error),
          });
          return false;
        },
      )
      .then((progressed) => {
        this.#compacting = null;
        const deferred = this.#deferredMinBytes;
        this.#deferredMinBytes = null;
        if (progressed || deferred !== null)
          this.#compactSoon(Math.min(minBytes, deferred ?? minBytes));
      });
    this.#deps.keepAlive(this.#compacting);
  }

  /**
   * Writes the compacted pack (streamed from the small packs' spans: 5 reads at once and the put,
   * the 6 connections an invocation has), then moves the refs that did not change meanwhile.
   */
  async #compact(plan: CompactionPlan): Promise<number> {
    this.#deps.onCompaction();
    const { bucket } = this.#deps;
    const { body } = streamSpans(bucket, plan.head, plan.reads, ARROW_EOS);
    await bucket.put(plan.key, body, { httpMetadata: { contentType: ARROW_STREAM_MEDIA_TYPE } });
    return this.#deps.packs.move(plan.moves, this.#deps.now());
  }
}
