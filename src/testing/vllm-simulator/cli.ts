/**
 * @module Command line for the vLLM simulator, for tests and benches that run in another process.
 *
 * @example
 * npx tsx src/testing/vllm-simulator/cli.ts --port 8000 --latency-ttft-ms 20 --latency-per-token-ms 5
 */
import { parseArgs } from "node:util";
import type { CompatOptions, VllmSimulatorOptions } from "./options";
import { startVllmSimulator } from "./server";

const USAGE = `Usage: npm run simulator -- [options]   (or: npx tsx src/testing/vllm-simulator/cli.ts [options])
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
  --no-prompt-text              omit prompt_text (vLLM before PR #42052)`;

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new RangeError(`--${flag} must be a number, got "${value}"`);
  return parsed;
}

/** Parses CLI flags into simulator options. */
function parseCliOptions(args: string[]): VllmSimulatorOptions | "help" {
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
    latency: { ttftMs: number(values["latency-ttft-ms"], "latency-ttft-ms") ?? 0, perTokenMs: number(values["latency-per-token-ms"], "latency-per-token-ms") ?? 0 },
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
    }),
  };
  // Drop flags that were not given, so defaults apply.
  return dropUndefined(options);
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

async function main(): Promise<void> {
  const options = parseCliOptions(process.argv.slice(2));
  if (options === "help") {
    console.log(USAGE);
    return;
  }
  const simulator = await startVllmSimulator(options);
  console.log(simulator.url);
  const stop = (): void => {
    void simulator.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  console.error(USAGE);
  // 2 for a usage error (unknown flag, missing value, bad number), as every command of ours.
  const usage = error instanceof RangeError || (error instanceof Error && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"));
  process.exit(usage ? 2 : 1);
});
