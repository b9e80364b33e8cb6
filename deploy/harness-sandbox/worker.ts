/**
 * @module The edge-rollout-harness Worker (wrangler.containers.toml): exports the sandbox and launcher
 * objects and the egress entrypoint, keeps the launcher running (cron), and answers `POST /launch`
 * (wake the launcher now; bearer API_TOKEN). It is not part of the edge-rollout Worker's build.
 */
import type { HarnessEnv } from "./harness-env";

export { HarnessEgress } from "./harness-egress";
export { HarnessSandbox } from "./harness-sandbox";
export { HarnessLauncher } from "./start-harness-sandbox";

export default {
  async fetch(request, env): Promise<Response> {
    const url = new URL(request.url);
    if (request.method !== "POST" || url.pathname !== "/launch")
      return new Response("not found", { status: 404 });
    if (request.headers.get("authorization") !== `Bearer ${env.API_TOKEN}`)
      return new Response("unauthorized", { status: 401 });
    await env.HARNESS_LAUNCHER.getByName("launcher").wake();
    return new Response(null, { status: 204 });
  },
  async scheduled(_controller, env): Promise<void> {
    await env.HARNESS_LAUNCHER.getByName("launcher").wake();
  },
} satisfies ExportedHandler<HarnessEnv>;
