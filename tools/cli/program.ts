/** @module The `edge-rollout` command line: commands, their flags, and how each maps onto a runner. */
import { Command, Option } from "commander";
import { MAX_BATCH_ROWS, MAX_MAX_CONCURRENT, MAX_SAMPLES_PER_ROW } from "../../src/schemas/batch";
import {
  DEFAULT_LEASE_MS,
  MAX_LEASE_MS,
  MAX_PULL_GROUPS,
  MIN_LEASE_MS,
} from "../../src/schemas/feed";
import { ApiClient } from "./api-client";
import { DEV_RUNNERS, runDev, type DevOptions } from "./commands/dev";
import { runDoctor } from "./commands/doctor";
import { DRAIN_FORMATS, runDrain, type DrainFormat } from "./commands/drain";
import { runEval } from "./commands/eval";
import { EXPORT_FORMATS, runExport, type ExportFormat } from "./commands/export";
import { runExportSamples } from "./commands/export-samples";
import { runShow } from "./commands/show";
import { runStatus } from "./commands/status";
import { runSubmit } from "./commands/submit";
import { UsageError } from "./errors";
import { INTERRUPT_POLICIES, type InterruptPolicy } from "./interrupt";
import { finiteNumber, integerIn, jsonObject, oneOf, resolveConnection } from "./options";
import type { Output } from "./output";

/** The help epilogue: environment and exit codes. */
export const HELP_FOOTER = `
Environment:
  EDGE_ROLLOUT_URL    default --url (else http://127.0.0.1:8787)
  EDGE_ROLLOUT_TOKEN  default --token (sent as Authorization: Bearer)
  EDGE_ROLLOUT_MODEL_URL  default --model-url of doctor

Exit codes:
  0    ok
  1    the operation failed (the server refused it, a check failed, a batch was cancelled elsewhere)
  2    usage error (unknown command or flag, bad value, missing file)
  3    the server is unreachable
  130  interrupted with Ctrl-C (submit: the batch was cancelled or left running, as printed)`;

interface ServerFlags {
  url?: string;
  token?: string;
  json?: boolean;
}

function withServer(command: Command): Command {
  return command
    .option("--url <url>", "API origin (default: $EDGE_ROLLOUT_URL or http://127.0.0.1:8787)")
    .option("--token <token>", "API token (default: $EDGE_ROLLOUT_TOKEN)")
    .option("--json", "print one JSON document for scripts instead of text");
}

function clientFor(flags: ServerFlags): ApiClient {
  return new ApiClient(resolveConnection(flags));
}

/**
 * Builds the program. Each action stores its exit code in `state.exitCode`; commander errors are
 * thrown (exitOverride) so `main` can map them to exit code 2.
 */
export function buildProgram(out: Output, state: { exitCode: number }, version: string): Command {
  const program = new Command("edge-rollout")
    .description(
      "Run LLM-agent rollouts for RL training on edge-rollout: submit datasets, follow batches, drain training samples.",
    )
    .version(version)
    .exitOverride()
    // A usage error prints the command's whole usage, as every command of ours does.
    .showHelpAfterError(true)
    .configureOutput({
      writeOut: (text) => out.stdout.write(text),
      writeErr: (text) => (out.json ? undefined : out.stderr.write(text)),
    })
    .addHelpText("after", HELP_FOOTER);

  program
    .command("dev")
    .description(
      "start the local stack (vLLM simulator + the Worker in workerd, reloaded on edit) and serve until Ctrl-C",
    )
    .option("--port <port>", "Worker port", integerIn("--port", 1, 65535), 8787)
    .option(
      "--simulator-port <port>",
      "simulator port (0 = any free port)",
      integerIn("--simulator-port", 0, 65535),
      8000,
    )
    .option("--model-url <url>", "use this model server instead of the simulator")
    .option(
      "--worker <file>",
      "the Worker entry to serve, e.g. examples/worker.ts (the examples' agents too)",
      "functions/worker.ts",
    )
    .option(
      "--state-dir <dir>",
      "local state: rollouts, policy, feed, R2 objects, logs (default .tmp/local-stack-<port>, kept across runs)",
    )
    .option("--reset", "delete the state dir first (policy version 0, empty feed)", false)
    .option("--seed <n>", "seed of the simulator's scripted answers", integerIn("--seed", 0), 1)
    .addOption(
      new Option(
        "--runner <name>",
        "miniflare: Miniflare's API, no dev proxy; wrangler: wrangler dev",
      )
        .choices(DEV_RUNNERS)
        .default("miniflare"),
    )
    .option("--verbose", "print the runtime's output", false)
    .option("--json", "print the URLs as one JSON document")
    .action(async (flags: DevOptions) => {
      state.exitCode = await runDev(flags, out);
    });

  withServer(program.command("submit").argument("<dataset>", "verl RL dataset: .parquet or .jsonl"))
    .description(
      "submit a dataset as a batch (rows × n rollouts) and follow it with a progress bar",
    )
    .requiredOption(
      "--agent <name>",
      "registered agent that runs every row (a row's agent_name overrides it)",
    )
    .requiredOption(
      "--n <count>",
      `samples per row, the GRPO group size (1..${MAX_SAMPLES_PER_ROW})`,
      integerIn("--n", 1, MAX_SAMPLES_PER_ROW),
    )
    .option("--limit <rows>", "use only the first <rows> rows", integerIn("--limit", 1))
    .option(
      "--batch-id <id>",
      "batch id (default: generated); re-submitting the same id and rows follows the existing batch",
    )
    .addOption(
      new Option("--mode <mode>", "train feeds the trainer, val only stores")
        .choices(["train", "val"])
        .default("train"),
    )
    .option(
      "--max-concurrent <n>",
      `rollouts in flight at once (1..${MAX_MAX_CONCURRENT}; server default 256)`,
      integerIn("--max-concurrent", 1, MAX_MAX_CONCURRENT),
    )
    .option("--training-mode <mode>", "training mode of the groups (server default verl/hybrid)")
    .option(
      "--chunk-rows <n>",
      `rows per batch; larger datasets become several batches run one after another (1..${MAX_BATCH_ROWS}, default ${MAX_BATCH_ROWS})`,
      integerIn("--chunk-rows", 1, MAX_BATCH_ROWS),
    )
    .option(
      "--config <json>",
      "rollout config for every rollout, e.g. '{\"max_steps\": 3}'",
      jsonObject("--config"),
    )
    .option("--interval <ms>", "progress poll interval", integerIn("--interval", 100), 1000)
    .option("--no-wait", "submit and exit without following the batch")
    .option("-y, --yes", "on Ctrl-C cancel the batch without asking", false)
    .option(
      "--on-interrupt <policy>",
      "on Ctrl-C: ask | cancel | leave (default: ask on a terminal, else leave running)",
      oneOf("--on-interrupt", INTERRUPT_POLICIES),
    )
    .action(
      async (
        dataset: string,
        flags: ServerFlags & {
          agent: string;
          n: number;
          limit?: number;
          batchId?: string;
          mode: "train" | "val";
          maxConcurrent?: number;
          trainingMode?: string;
          chunkRows?: number;
          config?: Record<string, unknown>;
          interval: number;
          wait: boolean;
          yes: boolean;
          onInterrupt?: InterruptPolicy;
        },
      ) => {
        const { interval, url: _url, token: _token, json: _json, ...rest } = flags;
        state.exitCode = await runSubmit(
          dataset,
          { ...rest, intervalMs: interval },
          clientFor(flags),
          out,
        );
      },
    );

  withServer(program.command("eval").argument("<dataset>", "verl RL dataset: .parquet or .jsonl"))
    .description(
      "run the dataset as a val batch and print pass@1 / pass@k, mean reward, a per-data_source table and failures by termination reason",
    )
    .requiredOption("--agent <name>", "registered agent that runs every row")
    .requiredOption(
      "--n <count>",
      `samples per row (1..${MAX_SAMPLES_PER_ROW})`,
      integerIn("--n", 1, MAX_SAMPLES_PER_ROW),
    )
    .option("--k <k>", "k of pass@k (default: n)", integerIn("--k", 1, MAX_SAMPLES_PER_ROW))
    .option("--limit <rows>", "use only the first <rows> rows", integerIn("--limit", 1))
    .option(
      "--compare <batch>",
      "put this earlier batch's report beside the new one (another policy version or model)",
    )
    .option(
      "--threshold <reward>",
      "a sample passes at reward >= this",
      finiteNumber("--threshold"),
      1,
    )
    .option("--batch-id <id>", "batch id (default: generated)")
    .option(
      "--max-concurrent <n>",
      `rollouts in flight at once (1..${MAX_MAX_CONCURRENT})`,
      integerIn("--max-concurrent", 1, MAX_MAX_CONCURRENT),
    )
    .option(
      "--config <json>",
      'rollout config for every rollout, e.g. \'{"model": "other-model"}\'',
      jsonObject("--config"),
    )
    .option("--interval <ms>", "progress poll interval", integerIn("--interval", 100), 1000)
    .action(
      async (
        dataset: string,
        flags: ServerFlags & {
          agent: string;
          n: number;
          k?: number;
          limit?: number;
          compare?: string;
          threshold: number;
          batchId?: string;
          maxConcurrent?: number;
          config?: Record<string, unknown>;
          interval: number;
        },
      ) => {
        const { interval, url: _url, token: _token, json: _json, ...rest } = flags;
        state.exitCode = await runEval(
          dataset,
          { ...rest, intervalMs: interval },
          clientFor(flags),
          out,
        );
      },
    );

  withServer(program.command("status").argument("[batch]", "batch id"))
    .description("a batch's progress; without a batch, the trainer feed's stats and the policy")
    .action(async (batch: string | undefined, flags: ServerFlags) => {
      state.exitCode = await runStatus(batch, clientFor(flags), out);
    });

  withServer(program.command("show").argument("<rollout>", "rollout id"))
    .description(
      "a rollout's trajectory: turns, tool calls, tokens, reward, termination, and which tokens train (mask 1)",
    )
    .option("--full", "do not shorten long messages", false)
    .option("--tokens", "print the token ids of the prompt and of every mask run", false)
    .action(async (rollout: string, flags: ServerFlags & { full: boolean; tokens: boolean }) => {
      state.exitCode = await runShow(
        rollout,
        { maxChars: flags.full ? Number.POSITIVE_INFINITY : 400, tokens: flags.tokens },
        clientFor(flags),
        out,
      );
    });

  withServer(program.command("drain"))
    .description(
      "pull complete GRPO groups from the trainer feed, write each sample as a JSON line (or Arrow), ack; until the feed is empty",
    )
    .requiredOption(
      "--out <path>",
      "JSONL file to append to, or with --format arrow a folder of part-<n>.arrows files (created if missing; samples already there are never written again)",
    )
    .option(
      "--format <format>",
      "jsonl | arrow (Arrow IPC streams pyarrow reads: ipc.open_stream)",
      oneOf("--format", DRAIN_FORMATS),
      "jsonl",
    )
    .option("--max-groups <n>", "stop after <n> groups", integerIn("--max-groups", 1))
    .option(
      "--per-pull <n>",
      `groups per pull (1..${MAX_PULL_GROUPS})`,
      integerIn("--per-pull", 1, MAX_PULL_GROUPS),
      16,
    )
    .option(
      "--lease-ms <ms>",
      "lease of each pull; unacked groups come back after it",
      integerIn("--lease-ms", MIN_LEASE_MS, MAX_LEASE_MS),
      DEFAULT_LEASE_MS,
    )
    .option("--training-mode <mode>", "pull only groups of this training mode")
    .option(
      "--batch <id...>",
      "pull only these batches (and their chunks <id>.chunk<k>); other consumers' groups stay in the feed",
    )
    .option(
      "--min-policy-version <v>",
      "skip groups older than this policy version",
      integerIn("--min-policy-version", 0),
    )
    .option(
      "--wait-ms <ms>",
      "when nothing is ready but groups are incomplete, wait this long for them",
      integerIn("--wait-ms", 0),
      5000,
    )
    .option(
      "--follow",
      "keep pulling until Ctrl-C or --max-groups, even when the feed is empty",
      false,
    )
    .option("--interval <ms>", "poll interval while waiting", integerIn("--interval", 100), 1000)
    .action(
      async (
        flags: ServerFlags & {
          out: string;
          format: DrainFormat;
          maxGroups?: number;
          perPull: number;
          leaseMs: number;
          trainingMode?: string;
          batch?: string[];
          minPolicyVersion?: number;
          waitMs: number;
          follow: boolean;
          interval: number;
        },
      ) => {
        const { interval, url: _url, token: _token, json: _json, ...rest } = flags;
        state.exitCode = await runDrain({ ...rest, intervalMs: interval }, clientFor(flags), out);
      },
    );

  withServer(program.command("export").argument("[rollout]", "rollout id (or --batch)"))
    .description(
      "a rollout as ATIF v1.7 (atif) or as the API's view (json), on stdout or in --out; or with --batch every training sample of a batch as one parquet file",
    )
    .option(
      "--format <format>",
      "atif | json for a rollout; parquet for --batch",
      oneOf("--format", [...EXPORT_FORMATS, "parquet"] as const),
    )
    .option(
      "--batch <id>",
      "export the training samples of this batch's finished rollouts (--format parquet, --out FILE)",
    )
    .option("--out <file>", "write to this file instead of stdout")
    .action(
      async (
        rollout: string | undefined,
        flags: ServerFlags & { format?: ExportFormat | "parquet"; batch?: string; out?: string },
      ) => {
        if ((rollout === undefined) === (flags.batch === undefined))
          throw new UsageError("export takes a rollout id or --batch ID, not both and not neither");
        if (flags.batch !== undefined) {
          if ((flags.format ?? "parquet") !== "parquet")
            throw new UsageError("--batch exports parquet; --format atif|json is for one rollout");
          if (flags.out === undefined) throw new UsageError("--batch needs --out FILE.parquet");
          state.exitCode = await runExportSamples(
            flags.batch,
            { out: flags.out },
            clientFor(flags),
            out,
          );
          return;
        }
        if (flags.format === "parquet")
          throw new UsageError("--format parquet exports a batch's samples: use --batch ID");
        state.exitCode = await runExport(
          rollout!,
          { format: flags.format ?? "atif", out: flags.out },
          clientFor(flags),
          out,
        );
      },
    );

  withServer(program.command("doctor"))
    .description(
      "check Node, the stack's health and API access, and the policy's model servers (health, token ids)",
    )
    .option(
      "--model-url <url...>",
      "model server(s) to check when the policy uses the deployment default (default: $EDGE_ROLLOUT_MODEL_URL)",
    )
    .action(async (flags: ServerFlags & { modelUrl?: string[] }) => {
      const modelUrls =
        flags.modelUrl ??
        (process.env.EDGE_ROLLOUT_MODEL_URL ? process.env.EDGE_ROLLOUT_MODEL_URL.split(",") : []);
      state.exitCode = await runDoctor({ modelUrls }, clientFor(flags), out);
    });

  return program;
}
