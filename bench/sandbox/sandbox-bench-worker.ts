/**
 * @module The Worker bench:sandbox loads into workerd: `POST /run` runs one call through the
 * LOADER binding (a fresh isolate, as production does per call) and answers its result, as the
 * sandbox host's `/run` does but with no Node supervisor in front; `POST /noop` reads the body and
 * answers `{}` (the HTTP round trip alone). The bench times each request from Node.
 */
import { createLoaderSandbox } from "../../src/sandbox/loader-sandbox";
import type { LoaderBinding } from "../../src/sandbox/worker-loader";
import { parseRunCodeRequest } from "../../src/sdk/run-code";

export default {
  async fetch(request: Request, env: { LOADER: LoaderBinding }): Promise<Response> {
    const path = new URL(request.url).pathname;
    const body = await request.json();
    if (path === "/noop") return Response.json({});
    if (path !== "/run") return new Response("not found", { status: 404 });
    return Response.json(await createLoaderSandbox(env.LOADER).run(parseRunCodeRequest(body)));
  },
};
