/**
 * @module The drain bench's floor: a bare Worker on Miniflare (one workerd, like the real stack)
 * that answers `POST /v1/feed/pull` with bytes stored in its local R2, the very bodies the real
 * Worker answered, in the order it answered them, and `POST /v1/feed/ack` with a fixed body. The
 * same Python client drains it, so the floor is what the client, loopback HTTP and workerd's R2
 * cost for the same bytes, with nothing of ours in between.
 */
import { rmSync } from "node:fs";
import { Log, LogLevel, Miniflare } from "miniflare";

/**
 * `PUT /bodies/<format>/<i>` stores a body; `POST /reset` starts each format's sequence again;
 * a pull answers the next stored body of the format its Accept names (Arrow or JSON).
 */
const SCRIPT = `
const next = { arrow: 0, json: 0 };
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    if (request.method === "PUT" && path.startsWith("/bodies/")) {
      await env.BODIES.put(path.slice("/bodies/".length), request.body);
      return new Response("stored");
    }
    if (path === "/reset") {
      next.arrow = 0;
      next.json = 0;
      return new Response("reset");
    }
    if (path === "/v1/feed/pull") {
      await request.arrayBuffer();
      const format = (request.headers.get("accept") ?? "").includes("arrow") ? "arrow" : "json";
      const object = await env.BODIES.get(format + "/" + next[format]++);
      if (!object) return new Response("no more bodies", { status: 404 });
      const type = format === "arrow" ? "application/vnd.apache.arrow.stream" : "application/json";
      return new Response(object.body, { headers: { "content-type": type, "content-length": String(object.size) } });
    }
    if (path === "/v1/feed/ack") return Response.json({ lease_id: "floor", acked_groups: 0, already: false });
    return new Response("not found", { status: 404 });
  },
};
`;

/** The running floor Worker. */
export interface DrainFloor {
  url: string;
  stop(): Promise<void>;
}

/** Starts the floor Worker on a free loopback port, its R2 under `stateDir`. */
export async function startDrainFloor(stateDir: string): Promise<DrainFloor> {
  const mf = new Miniflare({
    modules: true,
    script: SCRIPT,
    compatibilityDate: "2026-04-01",
    r2Buckets: ["BODIES"],
    r2Persist: stateDir,
    host: "127.0.0.1",
    port: 0,
    cf: false,
    log: new Log(LogLevel.WARN),
  });
  const url = (await mf.ready).origin;
  return {
    url,
    async stop() {
      await mf.dispose().catch(() => undefined);
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
