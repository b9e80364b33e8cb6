/**
 * @module Everything a harness sandbox sends out over HTTP lands here (`interceptAllOutboundHttp`), and only
 * two things pass: the sandbox's own attempt's gateway, forwarded in-process to the edge-rollout
 * Worker with the real rollout key added, and (TASK_SOURCE = "r2") its own task's archive. Anything
 * else, any other rollout's gateway included, gets 403; HTTPS is not intercepted at all, and with
 * `enableInternet: false` it has nowhere to go
 * (developers.cloudflare.com/containers/api/durable-object-container/#interceptalloutboundhttp).
 * Routing is by path, not Host, so the in-container loopback relay (container_relay.py) works.
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import type { HarnessEnv } from "./harness-env";

/** Bound per sandbox by its Durable Object (`ctx.exports.HarnessEgress({ props })`); never seen by the container. */
export interface EgressProps {
  rolloutId: string;
  attempt: number;
  /** The attempt's rollout key (the claim's `llm.api_key`): added here, so the container needs none. */
  apiKey: string;
  /** The task directory name, when its archive may be fetched from HARNESS_TASKS. */
  task: string | null;
}

/** The virtual host the container's CLI is pointed at (any name would do: interception is catch-all). */
export const GATEWAY_HOST = "gateway.internal";

/** The egress policy of one sandbox (see the module doc). */
export class HarnessEgress extends WorkerEntrypoint<HarnessEnv, EgressProps> {
  override async fetch(request: Request): Promise<Response> {
    const props = this.ctx.props;
    const url = new URL(request.url);
    const gateway = `/v1/rollouts/${props.rolloutId}/attempts/${props.attempt}/llm/`;
    // `new URL` has already resolved any `..` segment, so the prefix check cannot be walked around.
    if (url.pathname.startsWith(gateway)) {
      const headers = new Headers(request.headers);
      // Both header spellings the gateway accepts; whatever placeholder the CLI sent is replaced.
      headers.set("authorization", `Bearer ${props.apiKey}`);
      headers.set("x-api-key", props.apiKey);
      const forwarded = new Request(`https://edge-rollout.internal${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body: request.body,
      });
      // Streams (SSE) pass through as they come; the gateway's own keepalives keep idle timers quiet.
      return this.env.EDGE_ROLLOUT.fetch(forwarded);
    }
    if (
      props.task &&
      request.method === "GET" &&
      url.pathname === `/harness-tasks/${props.task}.tar.gz`
    ) {
      const archive = await this.env.HARNESS_TASKS.get(`harness-tasks/${props.task}.tar.gz`);
      if (archive)
        return new Response(archive.body, { headers: { "content-type": "application/gzip" } });
      return new Response("no such task archive", { status: 404 });
    }
    console.warn("harness sandbox egress refused", {
      rollout_id: props.rolloutId,
      method: request.method,
      host: url.host,
      path: url.pathname.slice(0, 200),
    });
    return new Response("edge-rollout harness sandbox: only this attempt's gateway is reachable", {
      status: 403,
    });
  }
}
