/**
 * @module The sandbox host's Worker (local only): `POST /run` runs one call through its own LOADER
 * binding. It runs in a workerd process of its own that scripts/sandbox-host.ts supervises, so a
 * snippet that wedges or exhausts this process takes nothing else down.
 */
import { InvalidInputError } from "../src/errors";
import { createLoaderSandbox } from "../src/sandbox/loader-sandbox";
import { parseRunCodeRequest } from "../src/sdk/run-code";

/** The host's bindings. */
interface SandboxHostEnv {
  LOADER: WorkerLoader;
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/ping") return new Response("pong");
    if (url.pathname !== "/run" || request.method !== "POST") return new Response("not found", { status: 404 });
    try {
      const input = parseRunCodeRequest(await request.json());
      return Response.json(await createLoaderSandbox(env.LOADER).run(input));
    } catch (error) {
      const status = error instanceof InvalidInputError ? 422 : 400;
      return Response.json({ type: "about:blank", title: (error as Error).message, status }, { status, headers: { "content-type": "application/problem+json" } });
    }
  },
} satisfies ExportedHandler<SandboxHostEnv>;
