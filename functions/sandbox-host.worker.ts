/**
 * @module The sandbox host's Worker (local only): `POST /run` runs one call through its own LOADER
 * binding. It runs in a workerd process of its own that scripts/sandbox-host.ts supervises, so a
 * snippet that wedges or exhausts this process takes nothing else down. Pyodide's files arrive as
 * blob bindings (PYODIDE_*); `GET /python/snapshot` answers the booted interpreter's memory
 * snapshot (made at the first ask) and `PUT /python/snapshot` installs one made by another process.
 */
import { InvalidInputError } from "../src/errors";
import {
  createLoaderSandbox,
  createPythonSandbox,
  SANDBOX_COMPATIBILITY_DATE,
  type PythonSandbox,
} from "../src/sandbox";
// The file, not the SDK's door: this Worker runs without nodejs_compat, and the door's emitters
// import node:async_hooks (test/unit/architecture/front-doors.test.ts lists the exception).
import { parseRunCodeRequest } from "../src/sdk/run-code";

/** The host's bindings. */
interface SandboxHostEnv {
  LOADER: WorkerLoader;
  PYODIDE_MJS: string;
  PYODIDE_ASM_MJS: string;
  PYODIDE_WASM: ArrayBuffer;
  PYODIDE_STDLIB: ArrayBuffer;
  PYODIDE_LOCK: string;
}

// One per process: the snapshot it holds outlives the request that made it.
let python: PythonSandbox | undefined;

function pythonFor(env: SandboxHostEnv): PythonSandbox {
  python ??= createPythonSandbox(
    env.LOADER,
    {
      mjs: env.PYODIDE_MJS,
      asmMjs: env.PYODIDE_ASM_MJS,
      wasm: env.PYODIDE_WASM,
      stdlib: env.PYODIDE_STDLIB,
      lock: env.PYODIDE_LOCK,
    },
    SANDBOX_COMPATIBILITY_DATE,
  );
  return python;
}

function problem(status: number, title: string): Response {
  return Response.json(
    { type: "about:blank", title, status },
    { status, headers: { "content-type": "application/problem+json" } },
  );
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/ping") return new Response("pong");
    if (url.pathname === "/python/snapshot") {
      try {
        if (request.method === "PUT") {
          pythonFor(env).install(await request.arrayBuffer());
          return new Response(null, { status: 204 });
        }
        return new Response(await pythonFor(env).snapshot(), {
          headers: { "content-type": "application/octet-stream" },
        });
      } catch (error) {
        return problem(503, (error as Error).message);
      }
    }
    if (url.pathname !== "/run" || request.method !== "POST")
      return new Response("not found", { status: 404 });
    let input;
    try {
      input = parseRunCodeRequest(await request.json());
    } catch (error) {
      return problem(error instanceof InvalidInputError ? 422 : 400, (error as Error).message);
    }
    try {
      return Response.json(await createLoaderSandbox(env.LOADER, pythonFor(env)).run(input));
    } catch (error) {
      return problem(503, (error as Error).message);
    }
  },
} satisfies ExportedHandler<SandboxHostEnv>;
