/**
 * @module A batch rollout's id, `<batch>:<row>:<sample>`: built by the batch tracker, read back by
 * the sink, the dashboard and the command line. One module builds and parses it, so the writer and
 * its readers cannot disagree on the format. A re-run (`.retry-<k>`) or a tree child (`.t<k>-<i>`)
 * appends to this id; see `src/runtime/batch/batch-state.ts` and `tree-slots.ts`.
 */

/** The parts of a `<batch>:<row>:<sample>` id; `uid` is the row's GRPO group, `<batch>:<row>` as written in the id. */
export interface BatchRolloutIdParts {
  batch_id: string;
  uid: string;
  row_index: number;
  sample_index: number;
}

/**
 * The id of sample `sample` of row `row` of batch `batchId`.
 * @example batchRolloutId("gsm8k-0", 12, 3) // "gsm8k-0:12:3"
 */
export function batchRolloutId(batchId: string, row: number, sample: number): string {
  return `${batchId}:${row}:${sample}`;
}

// The last two `:<digits>` fields are row and sample; a batch id may itself hold colons.
const BATCH_ROLLOUT_ID = /^((.+):(\d+)):(\d+)$/;

/** The parts of `rolloutId` if it has the form `<batch>:<row>:<sample>`, else null (a rollout created alone, a re-run, a tree child). */
export function parseBatchRolloutId(rolloutId: string): BatchRolloutIdParts | null {
  const match = BATCH_ROLLOUT_ID.exec(rolloutId);
  return match
    ? {
        batch_id: match[2]!,
        uid: match[1]!,
        row_index: Number(match[3]),
        sample_index: Number(match[4]),
      }
    : null;
}

/**
 * The GRPO group of a rollout as read off its id (`<batch>:<row>:<sample>` → uid `<batch>:<row>`,
 * sample index); a rollout created alone is its own group of one. A view does not carry its
 * group, and only the ids in samples depend on it, so the sink's readers (dashboard, command line) use this.
 */
export function groupOf(rolloutId: string): { uid: string; sample_index: number } {
  const parts = parseBatchRolloutId(rolloutId);
  return parts
    ? { uid: parts.uid, sample_index: parts.sample_index }
    : { uid: rolloutId, sample_index: 0 };
}
