/**
 * @module The simulator's command-line flags, both ways: flags to options (the CLI) and options to
 * flags (`simulatorArgs`), so a bench that runs the simulator in another process describes it
 * with the same `VllmSimulatorOptions` object an in-process one takes.
 */
import { parseArgs } from "node:util";
import type { CompatOptions, EngineOptions, TailOptions, VllmSimulatorOptions } from "./options";

/** The CLI's help text. */
export const USAGE = `Usage: npm run simulator -- [options]   (or: npx tsx tools/simulator/cli.ts [options])
  -h, --help                    print this help
  --host <host>                 default 127.0.0.1
  --port <n>                    default 8000; 0 picks a free port
  --model <name>                default sim-qwen3
  --max-model-len <n>           default 139264
  --seed <n>                    default 0
  --success-rate <p>            default 0.7
  --latency-ttft-ms <ms>        default 0
  --latency-per-token-ms <ms>   default 0
  --rate-5xx <p> --rate-429 <p> --rate-timeout <p> --rate-malformed <p>   default 0
  --hang-ms <ms>                default 30000
  --thinking                    emit <think>…</think> before answers
  --strip-think-in-history      template drops <think> from history (not append-only)
  --role <both|prefill|decode>  prefill/decode disaggregation role; default both
  --reasoning-parser            move <think>…</think> out of content (vllm serve --reasoning-parser)
  --reasoning-field <reasoning|reasoning_content|both>   field the reasoning goes in; default reasoning
  --empty-reply-rate <p>        probability a reply is EOS at once; default 0
  --per-request-metrics         answer include_metrics (vllm serve --enable-per-request-metrics)
  --empty-tool-calls-list       send tool_calls: [] when none (vLLM before PR #44105)
  --prefill-eos-params <null|params>   handle of a prefill stopped on EOS; default null
  --block-ids-layout <per-group|flat>  remote_block_ids shape; default per-group
  --kv-cache-groups <n>         KV-cache groups (one block list each); default 1
  --no-prompt-text              omit prompt_text (vLLM before PR #42052)
  --policy-version <n>          version of the loaded weights (seeds logprobs); default 0
  --tail <pareto|lognormal>     heavy-tailed response lengths (a filler preamble per answer)
  --tail-shape <x>              pareto alpha (default 1.5) or lognormal sigma (default 1)
  --tail-scale-tokens <n>       pareto minimum or lognormal median, in tokens; default 64
  --tail-max-tokens <n>         longest preamble; default 8192
  --difficulty <k>              per-prompt success rate ~ Beta(k*p, k*(1-p)); default off
  --tokenizer <qwen3|toy>       vocabulary and chat template; default qwen3 (Qwen3's real ones;
                                $VLLM_SIM_TOKENIZER overrides the default); toy is instant to load
  --qwen3-parser <current|legacy>   reasoning-parser edge cases; default current
  --block-size <n>              tokens per KV block of the prefix cache; default 16
  --num-gpu-blocks-override <n> KV blocks the replica holds (LRU beyond); default 24576
  --prefill-ms-per-1k-tokens <ms>   prefill time per 1k uncached prompt tokens (queued per replica); default 0
  --decode-slowdown <x>         per-token time grows by x per other running request; default 0
  --cost-model default          time steps by the default cost curve (docs/vllm.md, "The engine")
  --step-fixed-ms <ms> --step-per-sequence-ms <ms> --step-per-prefill-token-ms <ms>
  --step-per-k-context-ms <ms>  a curve's terms (each implies --cost-model; the rest keep defaults)
  --time-scale <x>              wall time per modelled ms; default 1
  --max-num-seqs <n>            sequences running at once; default 256
  --max-num-batched-tokens <n>  tokens one step computes; default 8192
  --no-chunked-prefill          a prefill runs whole in one step
  --token-source-url <url>      an external engine answers each step's tokens; default the script
  --harness-tasks <dir>         answer agent-harness requests for the Harbor tasks in dir
                                (<task>/instruction.md, <task>/solution/solve.sh, optional wrong.sh)
  --harness-success-rate <p>    share of harness rollouts that run solve.sh; default 0.7`;

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new RangeError(`--${flag} must be a number, got "${value}"`);
  return parsed;
}

/** Parses CLI flags into simulator options (validated later by `resolveOptions`). */
export function parseCliOptions(args: string[]): VllmSimulatorOptions | "help" {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      model: { type: "string" },
      "max-model-len": { type: "string" },
      seed: { type: "string" },
      "success-rate": { type: "string" },
      "latency-ttft-ms": { type: "string" },
      "latency-per-token-ms": { type: "string" },
      "rate-5xx": { type: "string" },
      "rate-429": { type: "string" },
      "rate-timeout": { type: "string" },
      "rate-malformed": { type: "string" },
      "hang-ms": { type: "string" },
      thinking: { type: "boolean" },
      "strip-think-in-history": { type: "boolean" },
      role: { type: "string" },
      "reasoning-parser": { type: "boolean" },
      "reasoning-field": { type: "string" },
      "empty-reply-rate": { type: "string" },
      "per-request-metrics": { type: "boolean" },
      "empty-tool-calls-list": { type: "boolean" },
      "prefill-eos-params": { type: "string" },
      "block-ids-layout": { type: "string" },
      "kv-cache-groups": { type: "string" },
      "no-prompt-text": { type: "boolean" },
      "policy-version": { type: "string" },
      tail: { type: "string" },
      "tail-shape": { type: "string" },
      "tail-scale-tokens": { type: "string" },
      "tail-max-tokens": { type: "string" },
      difficulty: { type: "string" },
      tokenizer: { type: "string" },
      "qwen3-parser": { type: "string" },
      "block-size": { type: "string" },
      "num-gpu-blocks-override": { type: "string" },
      "prefill-ms-per-1k-tokens": { type: "string" },
      "decode-slowdown": { type: "string" },
      "cost-model": { type: "string" },
      "step-fixed-ms": { type: "string" },
      "step-per-sequence-ms": { type: "string" },
      "step-per-prefill-token-ms": { type: "string" },
      "step-per-k-context-ms": { type: "string" },
      "time-scale": { type: "string" },
      "max-num-seqs": { type: "string" },
      "max-num-batched-tokens": { type: "string" },
      "no-chunked-prefill": { type: "boolean" },
      "token-source-url": { type: "string" },
      "harness-tasks": { type: "string" },
      "harness-success-rate": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const options: VllmSimulatorOptions = {
    host: values.host,
    port: number(values.port, "port"),
    model: values.model,
    maxModelLen: number(values["max-model-len"], "max-model-len"),
    seed: number(values.seed, "seed"),
    successRate: number(values["success-rate"], "success-rate"),
    latency: {
      ttftMs: number(values["latency-ttft-ms"], "latency-ttft-ms") ?? 0,
      perTokenMs: number(values["latency-per-token-ms"], "latency-per-token-ms") ?? 0,
    },
    faults: {
      rate5xx: number(values["rate-5xx"], "rate-5xx"),
      rate429: number(values["rate-429"], "rate-429"),
      rateTimeout: number(values["rate-timeout"], "rate-timeout"),
      rateMalformed: number(values["rate-malformed"], "rate-malformed"),
      hangMs: number(values["hang-ms"], "hang-ms"),
    },
    thinking: values.thinking,
    stripThinkInHistory: values["strip-think-in-history"],
    // Checked with the other options by resolveOptions, which names the field when it is wrong.
    role: values.role as VllmSimulatorOptions["role"],
    reasoningParser: values["reasoning-parser"],
    emptyReplyRate: number(values["empty-reply-rate"], "empty-reply-rate"),
    perRequestMetrics: values["per-request-metrics"],
    compat: dropUndefined({
      reasoningField: values["reasoning-field"] as CompatOptions["reasoningField"],
      emptyToolCallsList: values["empty-tool-calls-list"],
      prefillEosParams: values["prefill-eos-params"] as CompatOptions["prefillEosParams"],
      blockIdsLayout: values["block-ids-layout"] as CompatOptions["blockIdsLayout"],
      kvCacheGroups: number(values["kv-cache-groups"], "kv-cache-groups"),
      promptText: values["no-prompt-text"] ? false : undefined,
      qwen3Parser: values["qwen3-parser"] as CompatOptions["qwen3Parser"],
    }),
    policyVersion: number(values["policy-version"], "policy-version"),
    tail:
      values.tail === undefined
        ? undefined
        : dropUndefined({
            distribution: values.tail as TailOptions["distribution"],
            shape: number(values["tail-shape"], "tail-shape"),
            scaleTokens: number(values["tail-scale-tokens"], "tail-scale-tokens"),
            maxTokens: number(values["tail-max-tokens"], "tail-max-tokens"),
          }),
    difficulty: number(values.difficulty, "difficulty"),
    tokenizer: values.tokenizer as VllmSimulatorOptions["tokenizer"],
    prefixCache: dropUndefined({
      blockSize: number(values["block-size"], "block-size"),
      capacityBlocks: number(values["num-gpu-blocks-override"], "num-gpu-blocks-override"),
      prefillMsPer1kTokens: number(values["prefill-ms-per-1k-tokens"], "prefill-ms-per-1k-tokens"),
      decodeSlowdown: number(values["decode-slowdown"], "decode-slowdown"),
    }),
    engine: dropUndefined({
      costModel: costModelOf(values),
      timeScale: number(values["time-scale"], "time-scale"),
      maxNumSeqs: number(values["max-num-seqs"], "max-num-seqs"),
      maxNumBatchedTokens: number(values["max-num-batched-tokens"], "max-num-batched-tokens"),
      chunkedPrefill: values["no-chunked-prefill"] ? false : undefined,
      tokenSourceUrl: values["token-source-url"],
    }),
    harnessTasks: values["harness-tasks"],
    harnessSuccessRate: number(values["harness-success-rate"], "harness-success-rate"),
  };
  // Drop flags that were not given, so defaults apply.
  return dropUndefined(options);
}

/** `--cost-model default`, or a curve from the `--step-*` terms given; undefined when neither is. */
function costModelOf(
  values: Record<string, string | boolean | undefined>,
): NonNullable<EngineOptions["costModel"]> | undefined {
  const text = (flag: string) => values[flag] as string | undefined;
  const terms = dropUndefined({
    fixedMs: number(text("step-fixed-ms"), "step-fixed-ms"),
    perSequenceMs: number(text("step-per-sequence-ms"), "step-per-sequence-ms"),
    perPrefillTokenMs: number(text("step-per-prefill-token-ms"), "step-per-prefill-token-ms"),
    perKContextTokensMs: number(text("step-per-k-context-ms"), "step-per-k-context-ms"),
  });
  if (Object.keys(terms).length > 0) return terms;
  const named = text("cost-model");
  if (named === undefined) return undefined;
  if (named !== "default") throw new RangeError(`--cost-model must be "default", got "${named}"`);
  return "default";
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The flags that make the CLI start a simulator with `options` (host and port excluded: the
 * caller picks them). Inverse of `parseCliOptions` for every option the CLI has.
 */
export function simulatorArgs(options: Omit<VllmSimulatorOptions, "host" | "port">): string[] {
  const args: string[] = [];
  const value = (flag: string, v: string | number | null | undefined): void => {
    if (v !== undefined && v !== null) args.push(`--${flag}`, String(v));
  };
  const flag = (name: string, on: boolean | undefined): void => {
    if (on) args.push(`--${name}`);
  };
  value("model", options.model);
  value("max-model-len", options.maxModelLen);
  value("seed", options.seed);
  value("success-rate", options.successRate);
  value("latency-ttft-ms", options.latency?.ttftMs);
  value("latency-per-token-ms", options.latency?.perTokenMs);
  value("rate-5xx", options.faults?.rate5xx);
  value("rate-429", options.faults?.rate429);
  value("rate-timeout", options.faults?.rateTimeout);
  value("rate-malformed", options.faults?.rateMalformed);
  value("hang-ms", options.faults?.hangMs);
  flag("thinking", options.thinking);
  flag("strip-think-in-history", options.stripThinkInHistory);
  value("role", options.role);
  flag("reasoning-parser", options.reasoningParser);
  value("reasoning-field", options.compat?.reasoningField);
  value("empty-reply-rate", options.emptyReplyRate);
  flag("per-request-metrics", options.perRequestMetrics);
  flag("empty-tool-calls-list", options.compat?.emptyToolCallsList);
  value("prefill-eos-params", options.compat?.prefillEosParams);
  value("block-ids-layout", options.compat?.blockIdsLayout);
  value("kv-cache-groups", options.compat?.kvCacheGroups);
  flag("no-prompt-text", options.compat?.promptText === false);
  value("policy-version", options.policyVersion);
  value("tail", options.tail?.distribution);
  value("tail-shape", options.tail?.shape);
  value("tail-scale-tokens", options.tail?.scaleTokens);
  value("tail-max-tokens", options.tail?.maxTokens);
  value("difficulty", options.difficulty);
  value("tokenizer", options.tokenizer);
  value("qwen3-parser", options.compat?.qwen3Parser);
  value("block-size", options.prefixCache?.blockSize);
  value("num-gpu-blocks-override", options.prefixCache?.capacityBlocks);
  value("prefill-ms-per-1k-tokens", options.prefixCache?.prefillMsPer1kTokens);
  value("decode-slowdown", options.prefixCache?.decodeSlowdown);
  const curve = options.engine?.costModel;
  if (curve === "default") args.push("--cost-model", "default");
  else if (curve) {
    const before = args.length;
    value("step-fixed-ms", curve.fixedMs);
    value("step-per-sequence-ms", curve.perSequenceMs);
    value("step-per-prefill-token-ms", curve.perPrefillTokenMs);
    value("step-per-k-context-ms", curve.perKContextTokensMs);
    // A curve with no term given is the default one.
    if (args.length === before) args.push("--cost-model", "default");
  }
  value("time-scale", options.engine?.timeScale);
  value("max-num-seqs", options.engine?.maxNumSeqs);
  value("max-num-batched-tokens", options.engine?.maxNumBatchedTokens);
  flag("no-chunked-prefill", options.engine?.chunkedPrefill === false);
  value("token-source-url", options.engine?.tokenSourceUrl);
  value("harness-tasks", options.harnessTasks);
  value("harness-success-rate", options.harnessSuccessRate);
  return args;
}
