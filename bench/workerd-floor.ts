/**
 * @module The workerd floor: the same multi-turn calls as the bare loop, made from inside a bare
 * Worker on Miniflare, with and without the Durable Object round trips a step of ours cannot do
 * without. It separates what workerd itself costs per step (its `fetch`, JSON, RPC and SQLite
 * plumbing, on the one thread everything shares locally) from what our code adds on top.
 *
 * "Objects" mode makes three RPCs per call to a per-rollout object that writes one SQLite row each,
 * the shape of a step of ours at its leanest: admission before the call, release after it, and
 * the step commit (ours also validates, encodes and records what those carry).
 */
import { Log, LogLevel, Miniflare } from "miniflare";
import { workerdChildren } from "../scripts/miniflare-stack";
import type { LoopShape } from "./bare-loop";
import { treeCpuByName } from "./process-cpu";

/** One floor run: wall time, calls made, and the workerd CPU they took. */
export interface FloorRun {
  wallMs: number;
  calls: number;
  cpuMsPerCall: number;
}

/** The bare Worker: `POST /` with the loop's shape runs every conversation at once and answers the call count. */
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
export default {
  async fetch(request, env) {
    const { base, model, rollouts, steps, maxTokens, rpcs } = await request.json();
    let calls = 0;
    await Promise.all(Array.from({ length: rollouts }, async (_, index) => {
      const object = env.STEP.get(env.STEP.idFromName("rollout-" + index));
      const messages = [
        { role: "system", content: "You are a helpful assistant. Keep answers short." },
        { role: "user", content: "Tell me about topic " + index + "." },
      ];
      for (let step = 0; step < steps; step++) {
        if (rpcs > 0) await object.touch("admit", String(step));
        const response = await fetch(base + "/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model, messages, max_tokens: maxTokens, temperature: 1, top_p: 1, logprobs: true, top_logprobs: 0, return_token_ids: true }),
        });
        const completion = await response.json();
        if (!response.ok) throw new Error("simulator answered " + response.status);
        calls++;
        const content = completion.choices[0].message.content ?? "";
        for (let rpc = 1; rpc < rpcs; rpc++) await object.touch(rpc === rpcs - 1 ? "step-" + step : "release", rpc === rpcs - 1 ? JSON.stringify(completion) : String(step));
        messages.push({ role: "assistant", content });
        messages.push({ role: "user", content: "Go on (" + (step + 2) + "/" + steps + ")." });
      }
    }));
    return Response.json({ calls });
  },
};
`;

/**
 * Runs the loop's shape inside a bare Worker, once with no object round trips and once with
 * `rpcs` per call, and reports each run's wall time and workerd CPU per call.
 */
export async function runWorkerdFloor(baseUrl: string, model: string, shape: LoopShape, rpcs: number): Promise<{ fetchOnly: FloorRun; withObjects: FloorRun }> {
  const before = new Set(workerdChildren());
  const mf = new Miniflare({
    modules: true,
    script: SCRIPT,
    compatibilityDate: "2025-04-01",
    durableObjects: { STEP: { className: "Step", useSQLite: true } },
    port: 0,
    host: "127.0.0.1",
    cf: false,
    log: new Log(LogLevel.WARN),
  });
  try {
    const url = await mf.ready;
    const pid = workerdChildren().find((child) => !before.has(child));
    const cpu = () => (pid ? (treeCpuByName(pid).workerd ?? 0) : Number.NaN);
    const run = async (objectRpcs: number, rollouts: number): Promise<FloorRun> => {
      const cpu0 = cpu();
      const start = performance.now();
      const response = await fetch(url, { method: "POST", body: JSON.stringify({ base: baseUrl, model, rollouts, steps: shape.steps, maxTokens: shape.maxTokens, rpcs: objectRpcs }) });
      if (!response.ok) throw new Error(`the floor Worker answered ${response.status}: ${await response.text()}`);
      const { calls } = (await response.json()) as { calls: number };
      return { wallMs: performance.now() - start, calls, cpuMsPerCall: (cpu() - cpu0) / calls };
    };
    await run(rpcs, 4); // warm-up: compile, open connections, create the objects' tables
    return { fetchOnly: await run(0, shape.rollouts), withObjects: await run(rpcs, shape.rollouts) };
  } finally {
    await mf.dispose();
  }
}
