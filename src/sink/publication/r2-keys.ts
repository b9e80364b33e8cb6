/** @module The R2 key layout of finished rollouts and datasets. */

/**
 * `rollouts/<rollout id>/record.json`: the rollout's view (trajectory, LLM calls, spans) and its
 * training samples; `rollouts/<rollout id>/atif.json`: the same trajectory as ATIF v1.7. Keyed by
 * rollout id alone, so a re-publish overwrites the same objects (idempotent) and a reader needs
 * nothing but the id. Batch rollout ids start with the batch id, so a batch is a key prefix too.
 */
export function rolloutRecordKey(rolloutId: string): string {
  return `rollouts/${rolloutId}/record.json`;
}

/** The ATIF document of a rollout. */
export function rolloutAtifKey(rolloutId: string): string {
  return `rollouts/${rolloutId}/atif.json`;
}

/**
 * The rollout's training samples alone, as an Arrow IPC stream (`sample-columns.ts`), written at
 * publication beside the record so a feed pull reads the samples without parsing the trajectory.
 */
export function rolloutSamplesKey(rolloutId: string): string {
  return `rollouts/${rolloutId}/samples.arrow`;
}

/**
 * Completed GRPO groups' samples, packed: one Arrow IPC stream per results-consumer batch (one
 * record batch per group), so a pull reads a few large objects instead of one per member.
 */
export function groupPackKey(id: string): string {
  return `packs/${id}.arrow`;
}
