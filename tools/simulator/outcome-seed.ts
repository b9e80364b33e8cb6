/**
 * @module Which outcome a generation gets: the seed its script and its draws come from. A sample
 * key (`x-sample-key`, which the gateway forwards for every rollout call) makes the outcome a
 * function of the sample and the prompt, not of the order requests arrive in, so two arms of a
 * benchmark, or a re-run, see the same outcomes whatever else runs beside them.
 */
import { hashParts } from "./rng";

/** The header that carries a request's sample key. */
export const SAMPLE_KEY_HEADER = "x-sample-key";

/**
 * Seed of one sampled outcome. temperature 0 is greedy, so it depends only on the prompt; a
 * request `seed` makes it reproducible; a sample key keys it by sample and prompt; otherwise a
 * per-server request number varies it (and outcomes then depend on arrival order).
 */
export function generationSeed(
  serverSeed: number,
  request: { seed?: number | null; temperature?: number | null },
  requestNumber: number,
  promptIds: readonly number[],
  sampleKey: string | null = null,
): number {
  if (request.temperature === 0) return hashParts(serverSeed, "greedy", promptIds);
  if (request.seed !== null && request.seed !== undefined)
    return hashParts(serverSeed, "seed", request.seed, promptIds);
  if (sampleKey !== null) return hashParts(serverSeed, "key", sampleKey, promptIds);
  return hashParts(serverSeed, "request", requestNumber, promptIds);
}
