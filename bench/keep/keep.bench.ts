/**
 * @module `npm run bench:keep`: what keeping a streamed call's progress costs a
 * Durable Object, side by side in one workerd (a micro-bench: the SQLite writes alone, not a call).
 * Arms, each a request to one object, interleaved, 300 rounds:
 * - `noop`: the request alone (the baseline every arm pays);
 * - `batch`: one cadence batch as call-flights.ts writes it (an INSERT of 128 chunk payloads,
 *   ~30 KB, and an UPDATE of the flight row);
 * - `per token`: one chunk written as its own row, as a write per token would do at each chunk's
 *   arrival (its own event, so its own implicit transaction); 128 of them keep what one batch does.
 * Prints the median and the 10th–90th percentiles of each arm's request time and what the writes
 * add per 128 tokens, against 128 tokens of decode at 20 ms a token (2.56 s).
 */
import { Miniflare } from "miniflare";

const ROUNDS = 300;
const TOKENS = 128;
// A chat chunk with one token, its logprob and token id, as vLLM streams them (~240 bytes).
const CHUNK = JSON.stringify({
  id: "chatcmpl-0123456789abcdef0123456789abcdef",
  object: "chat.completion.chunk",
  created: 1796421839,
  model: "sim-qwen3",
  choices: [
    {
      index: 0,
      delta: { content: " word" },
      logprobs: {
        content: [{ token: " word", logprob: -0.6931, bytes: [32, 119, 111, 114, 100] }],
      },
      token_ids: [3409],
      finish_reason: null,
    },
  ],
});

const script = `
export class Flights {
  constructor(ctx) {
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS call_flights (call_id TEXT PRIMARY KEY, started_at INTEGER NOT NULL, kept_tokens INTEGER NOT NULL DEFAULT 0, runs TEXT, interrupted INTEGER NOT NULL DEFAULT 0, restarts INTEGER NOT NULL DEFAULT 0, batches INTEGER NOT NULL DEFAULT 0)");
    this.sql.exec("CREATE TABLE IF NOT EXISTS call_flight_parts (call_id TEXT NOT NULL, kind TEXT NOT NULL, seq INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (call_id, kind, seq))");
    this.sql.exec("CREATE TABLE IF NOT EXISTS per_token (call_id TEXT NOT NULL, seq INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (call_id, seq))");
    this.sql.exec("INSERT OR IGNORE INTO call_flights (call_id, started_at) VALUES ('c', 0)");
    this.seq = 0;
  }
  async fetch(request) {
    const arm = new URL(request.url).pathname;
    if (arm === "/batch") {
      const payloads = JSON.stringify(Array.from({ length: ${TOKENS} }, () => ${JSON.stringify(CHUNK)}));
      this.sql.exec("INSERT INTO call_flight_parts (call_id, kind, seq, text) SELECT call_id, 'chunks', batches, ? FROM call_flights WHERE call_id = ?", payloads, "c");
      this.sql.exec("UPDATE call_flights SET kept_tokens = kept_tokens + ?, runs = ?, interrupted = ?, batches = batches + 1 WHERE call_id = ?", ${TOKENS}, '[{"from_token":0,"policy_version":0}]', 0, "c");
    } else if (arm === "/per-token") {
      this.sql.exec("INSERT INTO per_token (call_id, seq, text) VALUES (?, ?, ?)", "c", this.seq++, ${JSON.stringify(CHUNK)});
    }
    return new Response("ok");
  }
}
export default {
  fetch(request, env) {
    return env.FLIGHTS.get(env.FLIGHTS.idFromName("one")).fetch(request);
  },
};
`;

const mf = new Miniflare({
  modules: true,
  script,
  durableObjects: { FLIGHTS: { className: "Flights", useSQLite: true } },
  durableObjectsPersist: false,
});
const url = await mf.ready;
const arms = ["/noop", "/batch", "/per-token"] as const;
const times: Record<(typeof arms)[number], number[]> = {
  "/noop": [],
  "/batch": [],
  "/per-token": [],
};
for (let round = 0; round < ROUNDS + 20; round++) {
  for (const arm of arms) {
    const started = performance.now();
    await (await fetch(new URL(arm, url))).text();
    // The first 20 rounds warm the isolate and the tables up; they are not counted.
    if (round >= 20) times[arm].push(performance.now() - started);
  }
}
await mf.dispose();

const at = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const median: Record<string, number> = {};
for (const arm of arms) {
  const sorted = [...times[arm]].sort((a, b) => a - b);
  median[arm] = at(sorted, 0.5);
  console.log(
    `${arm.slice(1).padEnd(10)} median ${at(sorted, 0.5).toFixed(3)} ms (p10 ${at(sorted, 0.1).toFixed(3)}, p90 ${at(sorted, 0.9).toFixed(3)}) over ${ROUNDS} rounds`,
  );
}
const batch = median["/batch"]! - median["/noop"]!;
// A write per token is a request's worth of work per chunk (the `per token` arm's whole time, its
// own event each), 128 times; the batch is one write on top of a chunk the object handles anyway.
const perToken = TOKENS * (median["/per-token"]! - median["/noop"]!);
console.log(
  `keeping ${TOKENS} tokens: one batch adds ${batch.toFixed(3)} ms; a row per token adds ${perToken.toFixed(3)} ms (${TOKENS} × ${(perToken / TOKENS).toFixed(3)} ms, ${(perToken / Math.max(batch, 0.001)).toFixed(0)}x the batch); against ${TOKENS} tokens of decode at 20 ms a token (${(TOKENS * 20) / 1000} s) a batch is ${((100 * batch) / (TOKENS * 20)).toFixed(3)}%`,
);
