/**
 * @module `npm run bench:drain`: how fast the Python client turns a pull into verl's padded arrays,
 * JSON and Arrow side by side in one run.
 *
 * A Node HTTP server on 127.0.0.1 answers `POST /v1/feed/pull` with one fixed payload of
 * `--groups` GRPO groups × `--n` samples of `--prompt-tokens` + `--response-tokens` tokens
 * (inline, as the Worker serves them): as JSON, or, when `Accept` asks for it, as the Arrow IPC
 * stream the Worker's encoder makes of the same samples; and `POST /v1/feed/ack`.
 * `bench/drain_bench.py` then times, per format over `--rounds` rounds (median), `Client.pull` +
 * `to_verl_batch` against decoding the very same bytes from memory (the floor). Loopback only, bounded.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { drainPayload, drainPayloadArrow } from "./drain-payload";
import { commandLine } from "../scripts/command-line";

const values = commandLine({
  usage: "npm run bench:drain -- [options]",
  description:
    "Samples/s from a feed pull to verl padded arrays (clients/python) vs decoding the same JSON.",
  flags: {
    groups: { type: "string", default: "32", help: "GRPO groups per pull" },
    n: { type: "string", default: "8", help: "samples per group" },
    "prompt-tokens": { type: "string", default: "512", help: "prompt tokens per sample" },
    "response-tokens": { type: "string", default: "1536", help: "response tokens per sample" },
    "prompt-length": { type: "string", default: "1024", help: "padded prompt length" },
    "response-length": { type: "string", default: "2048", help: "padded response length" },
    rounds: { type: "string", default: "5", help: "timed rounds" },
    python: {
      type: "string",
      default: process.env.PYTHON ?? "python3",
      help: "python interpreter with numpy and pyarrow (clients/python), from $PYTHON if set",
    },
    "from-worker": {
      type: "boolean",
      default: false,
      help: "drain a batch published through a real local stack instead of the canned server (defaults then: 256 groups, 2,048-token samples)",
    },
    packs: {
      type: "string",
      default: "on",
      help: "with --from-worker: group packs on or off (off: every pull reads each member's object)",
    },
    stream: {
      type: "string",
      default: "on",
      help: "with --from-worker: Arrow pulls streamed from the packs' byte spans (on) or read whole into the isolate (off)",
    },
    compaction: {
      type: "string",
      default: "on",
      help: "with --from-worker: feed shards compact small packs into large ones (on, the default threshold) or never (off)",
    },
    port: { type: "string", default: "8797", help: "with --from-worker: the Worker's port" },
  },
});
if (values["from-worker"]) {
  const { runDrainFromWorker } = await import("./drain-worker");
  // 2,048-token samples: 512 prompt + 1,536 response, as the goal states.
  const groups = process.argv.some((a) => a.startsWith("--groups")) ? Number(values.groups) : 256;
  process.exit(
    await runDrainFromWorker({
      groups,
      n: Number(values.n),
      promptTokens: Number(values["prompt-tokens"]),
      responseTokens: Number(values["response-tokens"]),
      promptLength: Number(values["prompt-length"]),
      responseLength: Number(values["response-length"]),
      rounds: Number(values.rounds === "5" ? "3" : values.rounds),
      python: values.python,
      port: Number(values.port),
      compaction: values.compaction !== "off",
      vars: {
        ...(values.packs === "off" ? { FEED_GROUP_PACKS: "off" } : {}),
        ...(values.stream === "off" ? { FEED_STREAMED_PULLS: "off" } : {}),
      },
    }),
  );
}
const shape = {
  groups: Number(values.groups),
  n: Number(values.n),
  promptTokens: Number(values["prompt-tokens"]),
  responseTokens: Number(values["response-tokens"]),
};
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

const root = resolve(import.meta.dirname, "..");
const args = [
  "bench/drain_bench.py",
  "--url",
  url,
  "--groups",
  values.groups,
  "--samples",
  String(shape.groups * shape.n),
  "--tokens",
  String(shape.promptTokens + shape.responseTokens),
  "--prompt-length",
  values["prompt-length"],
  "--response-length",
  values["response-length"],
  "--rounds",
  values.rounds,
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
