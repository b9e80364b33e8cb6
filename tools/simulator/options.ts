/** @module Options of the vLLM simulator, their defaults, and the runtime patch that changes them. */
import { z } from "zod";
import type { TokenizerName } from "./sim-tokenizer";
import { type EngineConfig, EngineOptions, patchEngine } from "./engine/engine-options";

export { EngineOptions, StepCostOptions, type EngineConfig } from "./engine/engine-options";

const Rate = z.number().min(0, "rates must be within 0..1").max(1, "rates must be within 0..1");

/** Simulated timing; applies to non-stream (total wait) and stream (paced chunks). */
export const LatencyOptions = z.strictObject({
  /** Time to first token, in ms. Default 0. */
  ttftMs: z.number().min(0, "latency.ttftMs must be >= 0"),
  /** Time between generated tokens, in ms. Default 0. */
  perTokenMs: z.number().min(0, "latency.perTokenMs must be >= 0"),
});
export type LatencyOptions = z.infer<typeof LatencyOptions>;

/** Fault injection for the generation endpoints; each rate is a probability per request. */
export const FaultOptions = z.strictObject({
  /** Answer 500 with an error body. Default 0. */
  rate5xx: Rate.optional(),
  /** Answer 429 with an error body. Default 0. */
  rate429: Rate.optional(),
  /** Hold the request `hangMs`, then destroy the socket without answering. Default 0. */
  rateTimeout: Rate.optional(),
  /** Answer 200 with a truncated JSON body, or a stream with a broken data line. Default 0. */
  rateMalformed: Rate.optional(),
  /** How long a timeout fault holds the request, in ms. Default 30000. */
  hangMs: z.number().min(0, "faults.hangMs must be >= 0").optional(),
});
export type FaultOptions = z.infer<typeof FaultOptions>;

/**
 * The server's part in prefill/decode disaggregation (vLLM's NixlConnector protocol): "both"
 * serves requests whole and ignores `kv_transfer_params`; "prefill" answers only the proxy's
 * prefill leg; "decode" answers only requests carrying a prefill's `kv_transfer_params`.
 */
export const PdRole = z.enum(["both", "prefill", "decode"], {
  error: 'role must be "both", "prefill" or "decode"',
});
export type PdRole = z.infer<typeof PdRole>;

/**
 * Where vLLM's wire format changed between releases: one switch per change, each defaulting to
 * current vLLM (see docs/vllm.md for the pull requests and versions).
 */
export const CompatOptions = z.strictObject({
  /**
   * The field a reasoning parser fills: "reasoning" (vLLM PR #27752 onward, alone since #33402),
   * "reasoning_content" (before #27752), or "both" (the deprecation window). Default "reasoning".
   */
  reasoningField: z
    .enum(["reasoning", "reasoning_content", "both"], {
      error: 'compat.reasoningField must be "reasoning", "reasoning_content" or "both"',
    })
    .optional(),
  /** Send `tool_calls: []` when no tool was called (before vLLM PR #44105) instead of omitting it. Default false. */
  emptyToolCallsList: z.boolean().optional(),
  /**
   * A prefill that stops on EOS answers `kv_transfer_params: null` (NixlConnector before it also
   * handed off FINISHED_STOPPED requests), or "params" as newer connectors do. Default "null".
   */
  prefillEosParams: z
    .enum(["null", "params"], { error: 'compat.prefillEosParams must be "null" or "params"' })
    .optional(),
  /** `remote_block_ids` as one list per KV-cache group (current NixlConnector) or one flat list (older). Default "per-group". */
  blockIdsLayout: z
    .enum(["per-group", "flat"], { error: 'compat.blockIdsLayout must be "per-group" or "flat"' })
    .optional(),
  /** KV-cache groups the model has (hybrid models have several); one block-id list each. Default 1. */
  kvCacheGroups: z
    .int()
    .min(1, "compat.kvCacheGroups must be >= 1")
    .max(8, "compat.kvCacheGroups must be <= 8")
    .optional(),
  /** Send the rendered `prompt_text` with `return_token_ids` (vLLM PR #42052). Default true. */
  promptText: z.boolean().optional(),
  /**
   * The qwen3 reasoning parser's edge cases: "current" (Qwen3/Qwen3.5 parser: no `</think>` while
   * thinking means truncated reasoning, all of it reasoning) or "legacy" (both tags needed, else all
   * content). Default "current".
   */
  qwen3Parser: z
    .enum(["current", "legacy"], { error: 'compat.qwen3Parser must be "current" or "legacy"' })
    .optional(),
});
export type CompatOptions = z.infer<typeof CompatOptions>;

/**
 * Heavy-tailed response lengths: each answer gets a filler preamble whose length in tokens is drawn
 * per choice from a Pareto (scale `scaleTokens`, shape α = `shape`, default 1.5) or a lognormal
 * (median `scaleTokens`, σ = `shape`, default 1) distribution, capped at `maxTokens`.
 */
export const TailOptions = z.strictObject({
  distribution: z.enum(["pareto", "lognormal"], {
    error: 'tail.distribution must be "pareto" or "lognormal"',
  }),
  /** Pareto α or lognormal σ. Default 1.5 (pareto) or 1 (lognormal). */
  shape: z.number().positive("tail.shape must be > 0").optional(),
  /** Pareto minimum or lognormal median, in tokens. Default 64. */
  scaleTokens: z.int().min(1, "tail.scaleTokens must be >= 1").optional(),
  /** Longest preamble, in tokens. Default 8192. */
  maxTokens: z.int().min(1, "tail.maxTokens must be >= 1").optional(),
});
export type TailOptions = z.infer<typeof TailOptions>;

/**
 * The replica's KV cache and compute (see docs/vllm.md, "The engine"). Prefix caching
 * is always on, as in vLLM V1; the timing terms default to 0, so by default it only counts.
 */
export const PrefixCacheOptions = z.strictObject({
  /** Tokens per KV block (`vllm serve --block-size`). Default 16. */
  blockSize: z
    .int()
    .min(1, "prefixCache.blockSize must be >= 1")
    .max(1024, "prefixCache.blockSize must be <= 1024")
    .optional(),
  /** KV blocks the replica holds (`--num-gpu-blocks-override`). Default 24576 (about 393k tokens). */
  capacityBlocks: z.int().min(1, "prefixCache.capacityBlocks must be >= 1").optional(),
  /** Prefill time per 1,000 uncached prompt tokens, in ms; prefills queue one after another per replica. Default 0. */
  prefillMsPer1kTokens: z
    .number()
    .min(0, "prefixCache.prefillMsPer1kTokens must be >= 0")
    .optional(),
  /** Decode slows by this fraction of `perTokenMs` for every other request running on the replica. Default 0. */
  decodeSlowdown: z.number().min(0, "prefixCache.decodeSlowdown must be >= 0").optional(),
});
export type PrefixCacheOptions = z.infer<typeof PrefixCacheOptions>;

/** Options of `startVllmSimulator`. */
export const VllmSimulatorOptions = z.strictObject({
  /** Interface to listen on. Default "127.0.0.1". */
  host: z.string().min(1).optional(),
  /** Port to listen on; 0 picks a free one. Default 8000. */
  port: z
    .int()
    .min(0, "port must be within 0..65535")
    .max(65535, "port must be within 0..65535")
    .optional(),
  /** Served model name; requests naming another model get vLLM's 404. Default "sim-qwen3". */
  model: z.string().min(1, "model must not be empty").optional(),
  /** Context window in tokens. Default 139264. */
  maxModelLen: z.int().min(2, "maxModelLen must be >= 2").optional(),
  /** Seed mixed into every sampled outcome. Default 0. */
  seed: z.int().optional(),
  /** Probability the script answers correctly. Default 0.7. */
  successRate: Rate.optional(),
  /** Simulated latency. Default `{ ttftMs: 0, perTokenMs: 0 }`. */
  latency: LatencyOptions.optional(),
  /** Injected faults. Default none. */
  faults: FaultOptions.optional(),
  /** Emit `<think>…</think>\n` before each answer. Default false. */
  thinking: z.boolean().optional(),
  /**
   * Template-breaking mode: earlier assistant messages lose their `<think>…</think>` when the
   * history is rendered (as in Qwen3's template), so prompts are no longer append-only. Default false.
   */
  stripThinkInHistory: z.boolean().optional(),
  /** Prefill/decode role (see `PdRole`). Default "both". */
  role: PdRole.optional(),
  /**
   * Run a reasoning parser (`vllm serve --reasoning-parser qwen3`): the `<think>` block leaves
   * `content` for the field `compat.reasoningField` names. Default false (thinking stays in content).
   */
  reasoningParser: z.boolean().optional(),
  /** Probability the model ends its reply at once (first token EOS, empty answer). Default 0. */
  emptyReplyRate: Rate.optional(),
  /** `--enable-per-request-metrics`: answer `metrics` to requests with `include_metrics: true`. Default false. */
  perRequestMetrics: z.boolean().optional(),
  /** Wire-format switches per vLLM version. Default: current vLLM. */
  compat: CompatOptions.optional(),
  /**
   * Version of the loaded weights. A weight sync sets it (`configure` / `PUT /sim/config`); it
   * seeds every logprob, so tokens generated under different versions are told apart. Default 0.
   */
  policyVersion: z.int().min(0, "policyVersion must be >= 0").optional(),
  /** Heavy-tailed response lengths (see `TailOptions`). Default none (the script's own lengths). */
  tail: TailOptions.nullable().optional(),
  /**
   * Per-prompt difficulty: each prompt's success rate is drawn once from Beta(κ·p, κ·(1−p)) with
   * p = `successRate` and κ = `difficulty`, seeded by the server seed and the prompt's last user
   * turn. Small κ (say 1) makes many prompts always or never solved (uniform GRPO groups), large
   * κ keeps every prompt near p. Default none: every prompt has `successRate`.
   */
  difficulty: z.number().positive("difficulty must be > 0").nullable().optional(),
  /**
   * The vocabulary and chat template served: "qwen3" (Qwen3's real tokenizer and template, built
   * once per process on first use, about a second) or "toy" (a small deterministic vocabulary with
   * a ChatML template, instant). Default: the `VLLM_SIM_TOKENIZER` environment variable, else "qwen3".
   */
  tokenizer: z.enum(["qwen3", "toy"], { error: 'tokenizer must be "qwen3" or "toy"' }).optional(),
  /** Prefix cache, prefill cost and decode slowdown under load (see `PrefixCacheOptions`). */
  prefixCache: PrefixCacheOptions.optional(),
  /** The step loop, its cost model and token source (see `EngineOptions`). */
  engine: EngineOptions.optional(),
  /**
   * A directory of agent-harness tasks in Harbor's layout (`<task>/instruction.md`,
   * `<task>/solution/solve.sh`, optional `<task>/solution/wrong.sh`), loaded at start: a request
   * that carries a task's instruction and offers a shell tool is answered with a shell call of
   * the task's solution (harness-script.ts). Default none.
   */
  harnessTasks: z.string().min(1, "harnessTasks must not be empty").nullable().optional(),
  /** Probability a harness rollout runs the task's solution rather than the wrong attempt. Default 0.7. */
  harnessSuccessRate: Rate.optional(),
});
export type VllmSimulatorOptions = z.infer<typeof VllmSimulatorOptions>;

/**
 * A change to a running simulator (`configure()` or `PUT /sim/config`): any option except
 * host and port; `latency`, `faults` and `compat` merge field by field into the current values.
 */
export const SimulatorConfigPatch = VllmSimulatorOptions.omit({ host: true, port: true }).extend({
  latency: LatencyOptions.partial().optional(),
});

/** `CompatOptions` with every default filled in. */
export type CompatConfig = Required<CompatOptions>;
export type SimulatorConfigPatch = z.infer<typeof SimulatorConfigPatch>;

/** Every option with its default filled in. */
export interface SimulatorConfig {
  host: string;
  port: number;
  model: string;
  maxModelLen: number;
  seed: number;
  successRate: number;
  latency: LatencyOptions;
  faults: Required<FaultOptions>;
  thinking: boolean;
  stripThinkInHistory: boolean;
  role: PdRole;
  reasoningParser: boolean;
  emptyReplyRate: number;
  perRequestMetrics: boolean;
  compat: CompatConfig;
  policyVersion: number;
  tail: TailOptions | null;
  difficulty: number | null;
  tokenizer: TokenizerName;
  prefixCache: Required<PrefixCacheOptions>;
  engine: EngineConfig;
  harnessTasks: string | null;
  harnessSuccessRate: number;
}

const DEFAULT_CONFIG: SimulatorConfig = {
  host: "127.0.0.1",
  port: 8000,
  model: "sim-qwen3",
  maxModelLen: 139264,
  seed: 0,
  successRate: 0.7,
  latency: { ttftMs: 0, perTokenMs: 0 },
  faults: { rate5xx: 0, rate429: 0, rateTimeout: 0, rateMalformed: 0, hangMs: 30_000 },
  thinking: false,
  stripThinkInHistory: false,
  role: "both",
  reasoningParser: false,
  emptyReplyRate: 0,
  perRequestMetrics: false,
  compat: {
    reasoningField: "reasoning",
    emptyToolCallsList: false,
    prefillEosParams: "null",
    blockIdsLayout: "per-group",
    kvCacheGroups: 1,
    promptText: true,
    qwen3Parser: "current",
  },
  policyVersion: 0,
  tail: null,
  difficulty: null,
  tokenizer: "qwen3",
  prefixCache: {
    blockSize: 16,
    capacityBlocks: 24_576,
    prefillMsPer1kTokens: 0,
    decodeSlowdown: 0,
  },
  engine: {
    costModel: null,
    timeScale: 1,
    maxNumSeqs: 256,
    maxNumBatchedTokens: 8192,
    chunkedPrefill: true,
    tokenSourceUrl: null,
  },
  harnessTasks: null,
  harnessSuccessRate: 0.7,
};

/** The default tokenizer: `VLLM_SIM_TOKENIZER` when it names one, else Qwen3's. */
function defaultTokenizer(): TokenizerName {
  const fromEnv = typeof process === "undefined" ? undefined : process.env.VLLM_SIM_TOKENIZER;
  return fromEnv === "toy" || fromEnv === "qwen3" ? fromEnv : DEFAULT_CONFIG.tokenizer;
}

function describe(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.join(".") || "options"}: ${issue.message}`)
    .join("; ");
}

/** Validates options eagerly, naming the field, and fills in defaults. */
export function resolveOptions(options: unknown = {}): SimulatorConfig {
  const parsed = VllmSimulatorOptions.safeParse(options ?? {});
  if (!parsed.success)
    throw new RangeError(`invalid vLLM simulator options: ${describe(parsed.error)}`);
  return applyPatch(
    {
      ...DEFAULT_CONFIG,
      tokenizer: defaultTokenizer(),
      host: parsed.data.host ?? DEFAULT_CONFIG.host,
      port: parsed.data.port ?? DEFAULT_CONFIG.port,
    },
    parsed.data,
  );
}

/** Parses a runtime patch; throws a RangeError naming the bad field. */
export function parseConfigPatch(patch: unknown): SimulatorConfigPatch {
  const parsed = SimulatorConfigPatch.safeParse(patch ?? {});
  if (!parsed.success)
    throw new RangeError(`invalid vLLM simulator config patch: ${describe(parsed.error)}`);
  return parsed.data;
}

/** `config` with `patch` applied (latency and faults merged field by field). */
export function applyPatch(config: SimulatorConfig, patch: SimulatorConfigPatch): SimulatorConfig {
  return {
    ...config,
    model: patch.model ?? config.model,
    maxModelLen: patch.maxModelLen ?? config.maxModelLen,
    seed: patch.seed ?? config.seed,
    successRate: patch.successRate ?? config.successRate,
    latency: { ...config.latency, ...stripUndefined(patch.latency) },
    faults: { ...config.faults, ...stripUndefined(patch.faults) },
    thinking: patch.thinking ?? config.thinking,
    stripThinkInHistory: patch.stripThinkInHistory ?? config.stripThinkInHistory,
    role: patch.role ?? config.role,
    reasoningParser: patch.reasoningParser ?? config.reasoningParser,
    emptyReplyRate: patch.emptyReplyRate ?? config.emptyReplyRate,
    perRequestMetrics: patch.perRequestMetrics ?? config.perRequestMetrics,
    compat: { ...config.compat, ...stripUndefined(patch.compat) },
    policyVersion: patch.policyVersion ?? config.policyVersion,
    tail: patch.tail === undefined ? config.tail : patch.tail,
    difficulty: patch.difficulty === undefined ? config.difficulty : patch.difficulty,
    tokenizer: patch.tokenizer ?? config.tokenizer,
    prefixCache: { ...config.prefixCache, ...stripUndefined(patch.prefixCache) },
    engine: patchEngine(config.engine, patch.engine),
    harnessTasks: patch.harnessTasks === undefined ? config.harnessTasks : patch.harnessTasks,
    harnessSuccessRate: patch.harnessSuccessRate ?? config.harnessSuccessRate,
  };
}

function stripUndefined<T extends object>(value: T | undefined): Partial<T> {
  if (!value) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
