/**
 * @module KV-pressure concurrency control (`GET`/`PUT /v1/policy/pressure`): the controller's
 * configuration and what it last saw. The controller reads vLLM's Prometheus metrics
 * (`vllm:kv_cache_usage_perc`, `vllm:num_requests_waiting`, `vllm:num_preemptions_total`) from
 * each replica and sizes the rollouts in flight across every running batch
 * (docs/decisions/0019-concurrency-follows-kv-pressure.md).
 */
import { z } from "zod";

const Fraction = (field: string) =>
  z
    .number(`${field} must be a number`)
    .gt(0, `${field} must be > 0`)
    .max(1, `${field} must be <= 1`);

const MetricsUrl = z.url({
  protocol: /^https?$/,
  error: "metrics_urls must list http(s) URLs",
});

/** Most `/metrics` URLs one controller reads per sample (one subrequest each). */
export const MAX_METRICS_URLS = 32;

/** The stored configuration, defaults filled in. */
export const PressureConfig = z
  .object({
    /** Whether rollouts in flight follow KV pressure. Default false: batches keep `max_concurrent`. */
    enabled: z.boolean("enabled must be a boolean").default(false),
    /** KV usage (0–1, `vllm:kv_cache_usage_perc`) at or above which the budget is cut. Default 0.9. */
    high_water: Fraction("high_water").default(0.9),
    /** KV usage at or below which the budget may grow again. Default 0.7. */
    low_water: Fraction("low_water").default(0.7),
    /** How often the replicas' `/metrics` are read, in ms. Default 2000. */
    period_ms: z
      .int("period_ms must be an integer")
      .min(250, "period_ms must be >= 250")
      .max(60_000, "period_ms must be <= 60000")
      .default(2_000),
    /** The fewest rollouts in flight across all batches. Default 1. */
    min_concurrency: z
      .int("min_concurrency must be an integer")
      .min(1, "min_concurrency must be >= 1")
      .default(1),
    /** The most rollouts in flight across all batches; null: the sum of the batches' `max_concurrent`. Default null. */
    max_concurrency: z
      .int("max_concurrency must be an integer")
      .min(1, "max_concurrency must be >= 1")
      .nullable()
      .default(null),
    /** Consecutive samples with preemptions after which the youngest rollouts above the budget are cancelled and re-run (a last resort: their work is lost). Default 5. */
    overload_samples: z
      .int("overload_samples must be an integer")
      .min(1, "overload_samples must be >= 1")
      .max(100, "overload_samples must be <= 100")
      .default(5),
    /** Where to read pressure; null: each backend replica's `/metrics` (the decode pool of `vllm_pd`). Default null. */
    metrics_urls: z
      .array(MetricsUrl)
      .min(1, "metrics_urls must list at least one URL")
      .max(MAX_METRICS_URLS, `metrics_urls must list at most ${MAX_METRICS_URLS} URLs`)
      .nullable()
      .default(null),
  })
  .strict();
export type PressureConfig = z.infer<typeof PressureConfig>;

/** The default configuration (control off). */
export const DEFAULT_PRESSURE_CONFIG: PressureConfig = PressureConfig.parse({});

/** Checks that hold between fields, each naming its field. */
function checkBounds(config: PressureConfig, ctx: z.RefinementCtx): void {
  if (config.low_water >= config.high_water)
    ctx.addIssue({
      code: "custom",
      path: ["low_water"],
      message: "low_water must be < high_water",
    });
  if (config.max_concurrency !== null && config.max_concurrency < config.min_concurrency)
    ctx.addIssue({
      code: "custom",
      path: ["max_concurrency"],
      message: "max_concurrency must be >= min_concurrency",
    });
}

/** A `PUT /v1/policy/pressure` body: any subset of the fields, merged over the stored config. */
export const PressureUpdate = PressureConfig.partial().strict();
export type PressureUpdate = z.infer<typeof PressureUpdate>;

/** `current` with `patch` merged, validated as a whole (field relations included). */
export function mergePressure(
  current: PressureConfig,
  patch: unknown,
): { ok: true; config: PressureConfig } | { ok: false; errors: FieldProblem[] } {
  const parsed = PressureUpdate.safeParse(patch);
  if (!parsed.success) return { ok: false, errors: problems(parsed.error) };
  const merged = PressureConfig.superRefine(checkBounds).safeParse({
    ...current,
    ...stripUndefined(parsed.data),
  });
  if (!merged.success) return { ok: false, errors: problems(merged.error) };
  return { ok: true, config: merged.data };
}

/** One invalid field. */
export interface FieldProblem {
  path: string;
  message: string;
}

function problems(error: z.ZodError): FieldProblem[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(body)",
    message: issue.message,
  }));
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** What one replica's `/metrics` said, under vLLM's names. */
export const ReplicaPressure = z.object({
  url: z.string(),
  /** `vllm:kv_cache_usage_perc` (or the older `vllm:gpu_cache_usage_perc`), 0–1; the largest engine's. */
  kv_usage: z.number(),
  /** `vllm:num_requests_running`, summed over engines. */
  running: z.number(),
  /** `vllm:num_requests_waiting`, summed over engines. */
  waiting: z.number(),
  /** `vllm:num_preemptions_total`, summed over engines (a counter). */
  preemptions: z.number(),
});
export type ReplicaPressure = z.infer<typeof ReplicaPressure>;

/** `GET /v1/policy/pressure`: the config and the controller's state. */
export interface PressureView {
  config: PressureConfig;
  /** The rollouts in flight the controller allows across all batches now (null: no batch has asked yet). */
  limit: number | null;
  /** What the last sample decided. */
  decision: "increase" | "decrease" | "hold" | "blind" | null;
  /** Consecutive overloaded samples. */
  overload_streak: number;
  /** Times sustained overload asked batches to cancel their youngest rollouts. */
  requeue_epoch: number;
  /** When the replicas were last read (ms), and what they said. */
  sampled_at: number | null;
  replicas: ReplicaPressure[];
  /** The batches sharing the budget, with their share. */
  batches: Array<{ batch_id: string; max_concurrent: number; live: number; share: number }>;
}

/** What a batch tracker is told when it asks for its share. */
export interface PressureShare {
  /** Whether control is on; off: the tracker uses its own `max_concurrent`. */
  enabled: boolean;
  /** Rollouts this batch may keep in flight now. */
  share: number;
  /** Bumped each time sustained overload asks batches to cancel their youngest rollouts above `share`. */
  requeue_epoch: number;
}
