/**
 * @module The sample key a model call carries upstream (`x-sample-key`): which sample of which row
 * the call belongs to, the same in every batch over the same rows and in every re-run of a slot.
 * vLLM ignores the header; the simulator keys its scripted outcomes and draws by it (with the
 * prompt), so two arms of a benchmark, or a re-run, see the same outcomes whatever runs beside
 * them. It is a header, never the request's `seed`: a seeded call could not be interrupted and
 * resumed from token ids by a weight sync.
 */
import { parseBatchRolloutId } from "../schemas/batch-rollout-id";

/** The header name, as the simulator reads it. */
export const SAMPLE_KEY_HEADER = "x-sample-key";

// A re-run of a slot appends `.retry-<k>`; a tree child `.t<k>-<i>` (kept: a child is its own sample).
const RETRY_SUFFIX = /(?:\.retry-\d+)+$/;
const TREE_SUFFIX = /^(.*?)((?:\.t\d+-\d+)+)$/;

/**
 * The sample key of a rollout's calls: `<row>:<sample>` (plus a tree child's suffix) for a batch
 * rollout, whatever the batch and attempt; the rollout id itself for a rollout created alone.
 * @example sampleKeyOf("gsm8k-step-3:12:5.retry-1") // "12:5"
 */
export function sampleKeyOf(rolloutId: string): string {
  const id = rolloutId.replace(RETRY_SUFFIX, "");
  const tree = TREE_SUFFIX.exec(id);
  const base = tree ? tree[1]! : id;
  const parts = parseBatchRolloutId(base);
  if (!parts) return id;
  return `${parts.row_index}:${parts.sample_index}${tree ? tree[2]! : ""}`;
}
