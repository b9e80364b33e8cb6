/**
 * @module The workerd floor: the same multi-turn calls as the bare loop, made from inside a bare
 * Worker on Miniflare, with and without the Durable Object round trips a step of ours cannot do
 * without. It separates what workerd itself costs per step (its `fetch`, JSON, RPC and SQLite
 * plumbing, on the one thread everything shares locally) from what our code adds on top.
 *
 * "Objects" mode makes three RPCs per call to a per-rollout object (a new one per rollout in every
 * run, as every rollout of ours gets a new session) that writes one SQLite row each,
 * the shape of a step of ours at its leanest: admission before the call, release after it, and
 * the step commit (ours also validates, encodes and records what those carry). "Publication" mode
 * adds what every finished rollout of ours sends once: as many R2 objects as ours put (the record,
 * the ATIF document, and the samples for a rollout a trainer pulls; given ours' bytes per rollout,
 * the record is padded to the same total) and one queue message when ours sends one (only where a
 * trainer or a batch reads it), consumed by a consumer that acks it. Locally R2
 * and Queues are Miniflare's simulators in the same workerd, so their CPU counts in the figure;
 * in production they are services whose work is not the Worker's CPU. bench:gateway uses the same
 * Worker as a bare pass-through proxy, with and without those round trips.
 */
import { rmSync } from "node:fs";
import { Log, LogLevel, Miniflare } from "miniflare";
import { workerdChildren } from "../../scripts/miniflare-stack";
import type { LoopShape } from "./bare-loop";
import { SYSTEM_PROMPT } from "./chat-calls";
import { treeCpuByName } from "./process-cpu";
import { type R2Stored, r2Stored } from "./r2-bytes";

/** One floor run: wall time, calls made, and the workerd CPU they took. */
export interface FloorRun {
  wallMs: number;
  calls: number;
  cpuMsPerCall: number;
}

/**
 * The bare Worker. `POST /loop` with the loop's shape runs every conversation at once and answers
 * the call count. `POST /proxy/<rpcs>/v1/chat/completions` passes one call through to the model
 * server as the bytes it gets back (a minimal OpenAI-compatible proxy), making `rpcs` object round
 * trips per call: one before it (admission), the rest after it (release, and the record, which
 * carries the reply); the object is chosen by the caller's API key, as a rollout's would be.
 */
const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
export class Step extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS rows (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
  }
  touch(key, value) {
    this.ctx.storage.sql.exec("INSERT INTO rows (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v", key, value);
    return value.length;
  }
}
async function afterCall(object, rpcs, step, record) {
  for (let rpc = 1; rpc < rpcs; rpc++) await object.touch(rpc === rpcs - 1 ? "step-" + step : "release", rpc === rpcs - 1 ? record : String(step));
}
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    if (path.startsWith("/proxy/")) {
      const rpcs = Number(path.split("/")[2]);
      const object = env.STEP.get(env.STEP.idFromName(request.headers.get("authorization") ?? "anonymous"));
      const body = await request.text();
      if (rpcs > 0) await object.touch("admit", "1");
      const upstream = await fetch(env.BASE + "/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body });
      const text = await upstream.text();
      await afterCall(object, rpcs, Date.now(), text);
      return new Response(text, { status: upstream.status, headers: { "content-type": "application/json" } });
    }
    const { model, system, rollouts, steps, maxTokens, rpcs, publish, publishBytes, publishObjects, announce } = await request.json();
    const run = crypto.randomUUID();
    let calls = 0;
    await Promise.all(Array.from({ length: rollouts }, async (_, index) => {
      // A new object per rollout in every run, as each rollout of ours has its own new session:
      // creating one (its SQLite file, its table) is part of what a rollout costs the platform.
      const object = env.STEP.get(env.STEP.idFromName("rollout-" + run + "-" + index));
      const records = [];
      const messages = [
        { role: "system", content: system },
        { role: "user", content: "Tell me about topic " + index + "." },
      ];
      for (let step = 0; step < steps; step++) {
        if (rpcs > 0) await object.touch("admit", String(step));
        const response = await fetch(env.BASE + "/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model, messages, max_tokens: maxTokens, temperature: 1, top_p: 1, logprobs: true, top_logprobs: 0, return_token_ids: true }),
        });
        const completion = await response.json();
        if (!response.ok) throw new Error("simulator answered " + response.status);
        calls++;
        const record = JSON.stringify(completion);
        await afterCall(object, rpcs, step, record);
        if (publish) records.push(record);
        messages.push({ role: "assistant", content: completion.choices[0].message.content ?? "" });
        messages.push({ role: "user", content: "Go on (" + (step + 2) + "/" + steps + ")." });
      }
      if (publish) {
        // About the sizes ours writes: every call's reply (token ids, logprobs) in the record, the
        // conversation in the ATIF document, the token arrays in the samples (which ours writes
        // only for a rollout a trainer pulls: as many objects as ours put, the first ones).
        const body = "[" + records.join(",") + "]";
        const others = [
          ["atif.json", JSON.stringify(messages)],
          ["samples.arrow", body.slice(0, body.length >> 1)],
        ].slice(0, Math.max(0, (publishObjects || 3) - 1));
        // Given the bytes a rollout of ours puts, the record is padded to make up the rest: R2's
        // local simulator, in the same workerd, costs by the byte, and it is not ours to count.
        const pad = Math.max(0, (publishBytes || 0) - others.reduce((n, [, text]) => n + text.length, body.length));
        const prefix = "rollouts/floor-" + index + "-" + Date.now();
        await Promise.all([
          env.BUCKET.put(prefix + "/record.json", pad > 0 ? body + " ".repeat(pad) : body),
          ...others.map(([name, text]) => env.BUCKET.put(prefix + "/" + name, text)),
        ]);
        if (announce !== false) await env.RESULTS.send({ key: prefix + "/record.json" });
      }
    }));
    return Response.json({ calls });
  },
  async queue(batch) {
    batch.ackAll();
  },
};
`;

/** What a rollout of ours published, for the floor to publish as much: R2 objects and bytes, and whether it sent a result message. */
export interface PublicationLike extends R2Stored {
  announced: boolean;
}

/** A running floor Worker. */
export interface WorkerdFloor {
  /** Where it listens (`/loop`, `/proxy/<rpcs>/v1`). */
  url: string;
  /** CPU ms its workerd has used so far. */
  cpu(): number;
  /**
   * Runs the loop's shape inside the Worker with `rpcs` object round trips per call, and with
   * `publish`, each rollout's publication: `like.objects` R2 puts (rounded, 1–3; 3 without `like`)
   * of at least `like.bytes` together, and a queue message unless `like.announced` is false.
   */
  loop(
    model: string,
    shape: LoopShape,
    rpcs: number,
    publish?: boolean,
    like?: PublicationLike,
  ): Promise<FloorRun>;
  /** R2 objects and body bytes its publications stored so far (null without a persist root). */
  r2Stored(): R2Stored | null;
  stop(): Promise<void>;
}

/**
 * Starts the floor Worker on its own workerd, calling the model server at `baseUrl`. Its objects,
 * R2 and queue keep their data under `persistRoot` (the benches put ours on tmpfs too).
 */
export async function startWorkerdFloor(
  baseUrl: string,
  persistRoot?: string,
): Promise<WorkerdFloor> {
  const before = new Set(workerdChildren());
  const mf = new Miniflare({
    modules: true,
    script: SCRIPT,
    compatibilityDate: "2025-04-01",
    durableObjects: { STEP: { className: "Step", useSQLite: true } },
    r2Buckets: ["BUCKET"],
    queueProducers: { RESULTS: "floor-results" },
    queueConsumers: { "floor-results": { maxBatchTimeout: 1 } },
    ...(persistRoot ? { defaultPersistRoot: persistRoot } : {}),
    bindings: { BASE: baseUrl },
    port: 0,
    host: "127.0.0.1",
    cf: false,
    log: new Log(LogLevel.WARN),
  });
  const url = (await mf.ready).origin;
  const pid = workerdChildren().find((child) => !before.has(child));
  const cpu = () => (pid ? (treeCpuByName(pid).workerd ?? 0) : Number.NaN);
  return {
    url,
    cpu,
    r2Stored: () => (persistRoot ? r2Stored(persistRoot) : null),
    async loop(model, shape, rpcs, publish = false, like) {
      const cpu0 = cpu();
      const start = performance.now();
      const response = await fetch(`${url}/loop`, {
        method: "POST",
        body: JSON.stringify({
          model,
          system: SYSTEM_PROMPT,
          rollouts: shape.rollouts,
          steps: shape.steps,
          maxTokens: shape.maxTokens,
          rpcs,
          publish,
          publishBytes: like ? Math.round(like.bytes) : 0,
          publishObjects: like ? Math.min(3, Math.max(1, Math.round(like.objects))) : 3,
          announce: like?.announced ?? true,
        }),
      });
      if (!response.ok)
        throw new Error(`the floor Worker answered ${response.status}: ${await response.text()}`);
      const { calls } = (await response.json()) as { calls: number };
      return { wallMs: performance.now() - start, calls, cpuMsPerCall: (cpu() - cpu0) / calls };
    },
    stop: async () => {
      await mf.dispose();
      if (persistRoot?.startsWith("/dev/shm/"))
        rmSync(persistRoot, { recursive: true, force: true });
    },
  };
}
