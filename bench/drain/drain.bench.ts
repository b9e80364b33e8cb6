/**
 * @module `npm run bench:drain`: how fast the Python client turns a pull into verl's padded arrays,
 * JSON and Arrow side by side in one run.
 *
 * A Node HTTP server on 127.0.0.1 answers `POST /v1/feed/pull` with one fixed payload of
 * `--groups` GRPO groups × `--n` samples of `--prompt-tokens` + `--response-tokens` tokens
 * (inline, as the Worker serves them): as JSON, or, when `Accept` asks for it, as the Arrow IPC
 * stream the Worker's encoder makes of the same samples; and `POST /v1/feed/ack`. It holds no
 * feed: every pull answers the same bytes, so this measures the client, not a lease.
 * `drain_bench.py` then times, per format over `--rounds` rounds (median and range),
 * `Client.pull` + `to_verl_batch` against decoding the very same bytes from memory (the floor).
 * `--from-worker` drains a real local stack instead (drain-worker.ts: every drain on groups
 * published for it). Every flag is checked before anything starts: one that does not apply to the
 * mode, or a value out of range, is refused (exit 2). Loopback only, bounded.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { commandLine, integerFlag } from "../../scripts/command-line";
import { drainPayload, drainPayloadArrow } from "./drain-payload";

const USAGE = "npm run bench:drain -- [options]";
const HELP = "npm run bench:drain -- --help";
const values = commandLine({
  usage: USAGE,
  description:
    "Samples/s from a feed pull to verl padded arrays (clients/python) vs decoding the same bytes; with --from-worker, end to end from a real local stack.",
  flags: {
    groups: {
      type: "string",
      default: "32",
      help: "GRPO groups per pull; with --from-worker, groups per drain (each drain its own batch of them)",
    },
    n: { type: "string", default: "8", help: "samples per group" },
    "prompt-tokens": { type: "string", default: "512", help: "prompt tokens per sample" },
    "response-tokens": { type: "string", default: "1536", help: "response tokens per sample" },
    "prompt-length": { type: "string", default: "1024", help: "padded prompt length" },
    "response-length": { type: "string", default: "2048", help: "padded response length" },
    rounds: {
      type: "string",
      help: "timed rounds, after one to warm up (default 5; with --from-worker 3, each round publishing 2 batches of --groups)",
    },
    python: {
      type: "string",
      default: process.env.PYTHON ?? "python3",
      help: "python interpreter with numpy and pyarrow (clients/python), from $PYTHON if set",
    },
    "from-worker": {
      type: "boolean",
      default: false,
      help: "drain batches published through a real local stack instead of the canned server",
    },
    packs: {
      type: "string",
      help: "with --from-worker: group packs on or off (off: every pull reads each member's object); default on",
    },
    stream: {
      type: "string",
      help: "with --from-worker: Arrow pulls streamed from the packs' byte spans (on) or read whole into the isolate (off); default on",
    },
    compaction: {
      type: "string",
      help: "with --from-worker: feed shards compact small packs into large ones (on, the default threshold) or never (off); default on",
    },
    port: { type: "string", help: "with --from-worker: the Worker's port; default 8797" },
  },
});

const fromWorker = values["from-worker"];
for (const name of ["packs", "stream", "compaction", "port"] as const)
  if (!fromWorker && values[name] !== undefined)
    refuse(`--${name} applies only with --from-worker`);
/** An `on`/`off` flag as a boolean (undefined: on). */
function onOff(name: "packs" | "stream" | "compaction"): boolean {
  const raw = values[name] ?? "on";
  if (raw !== "on" && raw !== "off") refuse(`--${name} must be on or off, got "${raw}"`);
  return raw === "on";
}
function refuse(message: string): never {
  process.stderr.write(`${message} (${HELP})\n`);
  process.exit(2);
}
const count = (name: keyof typeof values, raw: string, min = 1) =>
  integerFlag(`--${name}`, raw, min, Number.MAX_SAFE_INTEGER, HELP);
const shape = {
  groups: count("groups", values.groups),
  n: count("n", values.n),
  promptTokens: count("prompt-tokens", values["prompt-tokens"]),
  responseTokens: count("response-tokens", values["response-tokens"]),
};
const promptLength = count("prompt-length", values["prompt-length"]);
const responseLength = count("response-length", values["response-length"]);
const rounds = count("rounds", values.rounds ?? (fromWorker ? "3" : "5"));
// A sample longer than its padded length would be truncated by to_verl_batch, and timed as if whole.
if (shape.promptTokens > promptLength)
  refuse(`--prompt-tokens ${shape.promptTokens} is longer than --prompt-length ${promptLength}`);
if (shape.responseTokens > responseLength)
  refuse(
    `--response-tokens ${shape.responseTokens} is longer than --response-length ${responseLength}`,
  );

if (fromWorker) {
  const { runDrainFromWorker } = await import("./drain-worker");
  const packs = onOff("packs");
  const stream = onOff("stream");
  process.exit(
    await runDrainFromWorker({
      ...shape,
      promptLength,
      responseLength,
      rounds,
      warmUpGroups: Math.min(shape.groups, 8),
      python: values.python,
      port: integerFlag("--port", values.port ?? "8797", 1, 65_535, HELP),
      compaction: onOff("compaction"),
      vars: {
        ...(packs ? {} : { FEED_GROUP_PACKS: "off" }),
        ...(stream ? {} : { FEED_STREAMED_PULLS: "off" }),
      },
    }),
  );
}
const payload = drainPayload(shape);
const body = Buffer.from(JSON.stringify(payload));
const arrowBody = Buffer.from(drainPayloadArrow(payload));
const ARROW = "application/vnd.apache.arrow.stream";
const ack = Buffer.from(
  JSON.stringify({ lease_id: "lease-bench", acked_groups: shape.groups, already: false }),
);

const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    const arrow = request.url === "/v1/feed/pull" && (request.headers.accept ?? "").includes(ARROW);
    const answer = arrow
      ? arrowBody
      : request.url === "/v1/feed/pull"
        ? body
        : request.url === "/v1/feed/ack"
          ? ack
          : null;
    response.writeHead(answer ? 200 : 404, {
      "content-type": arrow ? ARROW : "application/json",
      "content-length": answer?.length ?? 0,
    });
    response.end(answer ?? undefined);
  });
});
await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const root = resolve(import.meta.dirname, "../..");
const args = [
  "bench/drain/drain_bench.py",
  "--url",
  url,
  "--groups",
  String(shape.groups),
  "--samples",
  String(shape.groups * shape.n),
  "--tokens",
  String(shape.promptTokens + shape.responseTokens),
  "--prompt-length",
  String(promptLength),
  "--response-length",
  String(responseLength),
  "--rounds",
  String(rounds),
];
const child = spawn(values.python, args, { cwd: root, stdio: "inherit" });
// Bounded: a stuck child is killed rather than left running.
const guard = setTimeout(() => child.kill("SIGKILL"), 300_000);
const code = await new Promise<number>((done) => {
  child.once("error", (error) => {
    console.error(
      `bench:drain needs ${values.python} with numpy (clients/python): ${error.message}`,
    );
    done(1);
  });
  child.once("exit", (exitCode) => done(exitCode ?? 1));
});
clearTimeout(guard);
server.close();
process.exit(code);
