/**
 * @module `npm run bench:platform-costs`: what each platform operation a rollout makes costs the
 * local workerd, in instructions (callgrind), with no code of ours around it: an HTTP request to a
 * Worker, a Durable Object RPC (bare, with a SQLite write, to a new object), an alarm, a
 * service-binding fetch, a queue message sent and consumed, an R2 put. Multiplied by the
 * operations a rollout makes (bench:loop prints them from the objects' counters), it tells which
 * part of bench:instructions' gap above the floor is the platform's price for the API and the
 * design, and which is our code. Locally Miniflare simulates R2 and Queues inside the same
 * workerd, so their figures are the simulators' cost, not production's.
 */
import { Log, LogLevel, Miniflare } from "miniflare";
import { commandLine } from "../../scripts/command-line";
import { requireValgrind, startCallgrind } from "../kit/callgrind";

const values = commandLine({
  usage: "npm run bench:platform-costs -- [options]",
  description: "Instructions per platform operation in the local workerd, counted by callgrind.",
  flags: {
    reps: {
      type: "string",
      default: "20",
      help: "operations counted per kind (after as many to warm up)",
    },
    "put-bytes": { type: "string", default: "10000,1000", help: "R2 object sizes to put, bytes" },
  },
});
const reps = Number(values.reps);
const putBytes = String(values["put-bytes"]).split(",").map(Number);

/** A Worker and an object doing nothing but the operation asked for, `n` times in one request. */
const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
export class Probe extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT)");
  }
  noop() { return 1; }
  write(k) { this.ctx.storage.sql.exec("INSERT OR REPLACE INTO kv VALUES (?, 'v')", k); return 1; }
  async arm() { await this.ctx.storage.setAlarm(Date.now()); return 1; }
  async armLater() { await this.ctx.storage.setAlarm(Date.now() + 3600000); return 1; }
  async alarm() {}
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("n") ?? 0);
    const run = crypto.randomUUID();
    const one = env.PROBE.get(env.PROBE.idFromName("one"));
    const each = async (f) => { for (let i = 0; i < n; i++) await f(i); };
    switch (url.pathname) {
      case "/noop": return new Response("ok");
      case "/rpc": await each(() => one.noop()); break;
      case "/rpc-write": await each((i) => one.write("k" + i)); break;
      case "/new-object": await each((i) => env.PROBE.get(env.PROBE.idFromName(run + i)).write("k")); break;
      case "/alarm": await each((i) => env.PROBE.get(env.PROBE.idFromName(run + i)).arm()); break;
      case "/set-alarm": await each(() => one.armLater()); break;
      case "/service": await each(async () => (await env.SELF.fetch("http://self/noop")).text()); break;
      case "/queue": await each((i) => env.QUEUE.send({ i })); break;
      case "/r2": {
        const body = "x".repeat(Number(url.searchParams.get("bytes")));
        await each((i) => env.BUCKET.put(run + "/" + i, body));
        break;
      }
      default: return new Response("unknown probe", { status: 404 });
    }
    return new Response("ok");
  },
  async queue(batch) { batch.ackAll(); },
};`;

requireValgrind("bench:platform-costs");
const callgrind = startCallgrind();
const mf = new Miniflare({
  modules: true,
  script: SCRIPT,
  compatibilityDate: "2025-04-01",
  durableObjects: { PROBE: { className: "Probe", useSQLite: true } },
  r2Buckets: ["BUCKET"],
  queueProducers: { QUEUE: "probe-queue" },
  queueConsumers: { "probe-queue": { maxBatchTimeout: 1 } },
  serviceBindings: { SELF: "" },
  port: 0,
  host: "127.0.0.1",
  cf: false,
  log: new Log(LogLevel.WARN),
});
try {
  const origin = (await mf.ready).origin;
  const pid = callgrind.newProcess();
  const probe = (path: string) => async () => {
    const response = await fetch(`${origin}${path}`);
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    await response.text();
  };
  const kinds: Array<[string, () => Promise<void>]> = [
    [
      "HTTP request to a Worker (Miniflare's entry included)",
      async () => {
        for (let i = 0; i < reps; i++) await probe("/noop")();
      },
    ],
    ["Durable Object RPC, nothing done", probe(`/rpc?n=${reps}`)],
    ["Durable Object RPC, one SQLite upsert", probe(`/rpc-write?n=${reps}`)],
    ["new Durable Object, one SQLite upsert", probe(`/new-object?n=${reps}`)],
    ["Durable Object RPC, one setAlarm (an hour ahead)", probe(`/set-alarm?n=${reps}`)],
    ["new Durable Object, setAlarm and its alarm run", probe(`/alarm?n=${reps}`)],
    ["service-binding fetch (a Worker invocation)", probe(`/service?n=${reps}`)],
    ["queue message sent and consumed (simulator)", probe(`/queue?n=${reps}`)],
    ...putBytes.map((bytes): [string, () => Promise<void>] => [
      `R2 put of ${bytes} bytes (simulator)`,
      probe(`/r2?bytes=${bytes}&n=${reps}`),
    ]),
  ];
  console.log(
    `bench:platform-costs — instructions per operation in Miniflare's workerd (callgrind), ${reps} each after ${reps} to warm up`,
  );
  for (const [label, work] of kinds) {
    await work();
    // Counted until the queue's consumer and the alarms have run too (they follow the request).
    const { instructions } = await callgrind.count(pid, async () => {
      await work();
      await new Promise((resolve) => setTimeout(resolve, 1500));
    });
    console.log(`  ${label.padEnd(56)} ${(instructions / reps / 1e6).toFixed(2).padStart(6)} M`);
  }
} finally {
  await mf.dispose();
  callgrind.stop();
}
