/**
 * @module The hardware every mode of `npm run bench:train` gets: G GPU units, each either a
 * generation replica (one simulator process timed by the engine's cost curve) or a trainer GPU
 * (training time proportional to the tokens it trains). Hybrid generates on all G, then trains on
 * the same G (colocated, verl's default); the split modes generate on g and train on G − g at the
 * same time (verl's one_step_off and fully_async recipes). Every number is fixed before the run.
 *
 * Scale: the local stack relays a few dozen streams, not the hundreds of sequences a GPU runs, so
 * each simulated sequence stands for `seqsPerStream` (F) identical ones. A replica running b
 * streams is then one GPU running b·F sequences: the curve's per-sequence, per-context and prefill
 * terms are multiplied by F (the fixed term, reading the weights once a step, is not), its KV
 * cache and `maxNumSeqs` divided by F, and one trained simulated token costs F tokens of training.
 * Ratios between modes do not depend on the unit; absolute tokens/s are simulated tokens (× F real).
 */
import type { EngineOptions } from "../../tools/simulator/engine/engine-options";
import { DEFAULT_STEP_COST } from "../../tools/simulator/engine/default-step-cost";
import type { PrefixCacheOptions } from "../../tools/simulator/options";

/** H100 SXM dense BF16 peak (NVIDIA's datasheet), FLOP/s. */
export const H100_BF16_FLOPS = 989e12;
/** Parameters of the model the default cost curve serves (a Llama-3-8B-class model). */
export const MODEL_PARAMS = 8e9;
/**
 * Training FLOP per token, in units of the parameter count: 6 for the update (forward and
 * backward) plus 2 for recomputing the old log-probs before it (verl's `compute_log_prob`); no
 * reference model (GRPO without a KL term, as DAPO runs it).
 */
export const TRAIN_FLOP_PER_PARAM = 8;
/** Default KV blocks and running sequences of one real replica (the simulator's defaults). */
const REPLICA_BLOCKS = 24_576;
const REPLICA_MAX_SEQS = 256;

/** The capacity every mode shares. */
export interface Capacity {
  /** G: GPU units in all. */
  gpus: number;
  /** g: units that generate in the split modes (the rest train). */
  rolloutGpus: number;
  /** F: real sequences one simulated stream stands for. */
  seqsPerStream: number;
  /** Model FLOP utilisation of training (0–1). */
  mfu: number;
  /** Wall ms per modelled ms, for the engine and the trainer alike. */
  timeScale: number;
}

/** Which schedule shares the units how. */
export type Schedule = "hybrid" | "one_step_off" | "async";

/** Validates `capacity`, naming the field; throws a RangeError. */
export function checkCapacity(capacity: Capacity): Capacity {
  const { gpus, rolloutGpus, seqsPerStream, mfu, timeScale } = capacity;
  if (!Number.isInteger(gpus) || gpus < 2) throw new RangeError("--gpus must be an integer >= 2");
  if (!Number.isInteger(rolloutGpus) || rolloutGpus < 1 || rolloutGpus >= gpus)
    throw new RangeError("--rollout-gpus must be an integer in 1..gpus-1");
  if (!Number.isInteger(seqsPerStream) || seqsPerStream < 1 || seqsPerStream > 256)
    throw new RangeError("--seqs-per-stream must be an integer in 1..256");
  if (!(mfu > 0 && mfu <= 1)) throw new RangeError("--mfu must be in (0, 1]");
  if (!(timeScale > 0)) throw new RangeError("--time-scale must be > 0");
  return capacity;
}

/** The GPU units that generate, and those that train, in `schedule`. */
export function split(capacity: Capacity, schedule: Schedule): { generate: number; train: number } {
  return schedule === "hybrid"
    ? { generate: capacity.gpus, train: capacity.gpus }
    : { generate: capacity.rolloutGpus, train: capacity.gpus - capacity.rolloutGpus };
}

/** Modelled ms one GPU trains one simulated token for (F real tokens). */
export function trainMsPerToken(capacity: Capacity): number {
  const seconds = (TRAIN_FLOP_PER_PARAM * MODEL_PARAMS) / (H100_BF16_FLOPS * capacity.mfu);
  return seconds * 1000 * capacity.seqsPerStream;
}

/** Wall ms `gpus` units take to train `tokens` simulated tokens (data parallel, evenly split). */
export function trainWallMs(capacity: Capacity, tokens: number, gpus: number): number {
  return (tokens * trainMsPerToken(capacity) * capacity.timeScale) / gpus;
}

/**
 * The engine of `units` generation units in one simulator process: the default curve scaled to F
 * sequences per stream, and `units` data-parallel replicas pooled (a step of b sequences spread
 * evenly over them takes what one replica's step of b / units takes, so the per-sequence, prefill
 * and context terms are divided by `units`; their KV caches and `maxNumSeqs` add up).
 */
export function replicaEngine(
  capacity: Capacity,
  units = 1,
): { engine: EngineOptions; prefixCache: PrefixCacheOptions } {
  const f = capacity.seqsPerStream / units;
  return {
    engine: {
      costModel: {
        fixedMs: DEFAULT_STEP_COST.fixedMs,
        perSequenceMs: DEFAULT_STEP_COST.perSequenceMs * f,
        perPrefillTokenMs: DEFAULT_STEP_COST.perPrefillTokenMs * f,
        perKContextTokensMs: DEFAULT_STEP_COST.perKContextTokensMs * f,
      },
      timeScale: capacity.timeScale,
      maxNumSeqs: Math.max(1, Math.floor(REPLICA_MAX_SEQS / f)),
    },
    prefixCache: { capacityBlocks: Math.max(1, Math.floor(REPLICA_BLOCKS / f)) },
  };
}

/** One line: the engine `units` pooled units run (replicaEngine). */
export function describeEngine(capacity: Capacity, units: number): string {
  const { engine, prefixCache } = replicaEngine(capacity, units);
  const c = engine.costModel as Required<
    Exclude<EngineOptions["costModel"], "default" | null | undefined>
  >;
  return `${units} unit(s) in one process: step ms = ${c.fixedMs} + ${c.perSequenceMs.toFixed(3)} x sequences + ${c.perPrefillTokenMs.toFixed(3)} x prefill tokens + ${c.perKContextTokensMs.toFixed(3)} x context tokens / 1000, max ${engine.maxNumSeqs} sequences, ${prefixCache.capacityBlocks} KV blocks`;
}

/** The lines a run prints about its hardware before it starts. */
export function describeCapacity(capacity: Capacity): string[] {
  const hybrid = split(capacity, "hybrid");
  const shared = split(capacity, "async");
  const { engine, prefixCache } = replicaEngine(capacity);
  const curve = engine.costModel as Exclude<
    EngineOptions["costModel"],
    "default" | null | undefined
  >;
  return [
    `capacity: ${capacity.gpus} GPU units in every mode; hybrid generates on ${hybrid.generate}, then trains on the same ${hybrid.train} (colocated); one_step_off and async generate on ${shared.generate} while ${shared.train} train (trainer share ${((100 * shared.train) / capacity.gpus).toFixed(0)}%)`,
    `generation unit: step ms = ${curve?.fixedMs} + ${curve?.perSequenceMs?.toFixed(2)} x sequences + ${curve?.perPrefillTokenMs?.toFixed(2)} x prefill tokens + ${curve?.perKContextTokensMs?.toFixed(2)} x context tokens / 1000, max ${engine.maxNumSeqs} sequences, ${prefixCache.capacityBlocks} KV blocks (the default 8B-on-H100 curve with each stream standing for ${capacity.seqsPerStream} sequences)`,
    `training unit: ${TRAIN_FLOP_PER_PARAM} x ${MODEL_PARAMS / 1e9}e9 FLOP per token at ${(capacity.mfu * 100).toFixed(0)}% MFU of an H100 (${H100_BF16_FLOPS / 1e12} TFLOP/s) = ${(trainMsPerToken(capacity) / capacity.seqsPerStream).toFixed(4)} ms per token per GPU, ${trainMsPerToken(capacity).toFixed(3)} ms per simulated token; time scale ${capacity.timeScale} (wall ms per modelled ms, engine and trainer alike)`,
  ];
}
