/**
 * @module The Worker python-loader-probe.ts loads: `POST /run` runs one Python call through
 * a LOADER sandbox whose Pyodide comes from BUCKET (one per isolate, as functions/code-sandbox.ts
 * keeps it) and answers the call's wall time and how many R2 reads it took; `POST /put?key=…`
 * stores its body in BUCKET (the upload).
 */
import {
  type PyodideBucket,
  createBucketPythonSandbox,
} from "../../src/sandbox/bucket-python-sandbox";
import { SANDBOX_COMPATIBILITY_DATE, createLoaderSandbox } from "../../src/sandbox/loader-sandbox";
import type { LoaderBinding } from "../../src/sandbox/worker-loader";
import type { CodeSandbox } from "../../src/schemas/run-code";
import { parseRunCodeRequest } from "../../src/sdk/run-code";

let sandbox: CodeSandbox | undefined;
let reads = 0;

export default {
  async fetch(
    request: Request,
    env: { LOADER: LoaderBinding; BUCKET: PyodideBucket },
  ): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/put")
      return (
        await env.BUCKET.put(url.searchParams.get("key")!, await request.arrayBuffer()),
        new Response(null, { status: 204 })
      );
    const bucket: PyodideBucket = {
      get: (key) => (reads++, env.BUCKET.get(key)),
      put: (key, value) => env.BUCKET.put(key, value),
    };
    sandbox ??= createLoaderSandbox(
      env.LOADER,
      createBucketPythonSandbox(env.LOADER, bucket, SANDBOX_COMPATIBILITY_DATE),
    );
    const before = reads;
    const started = Date.now();
    const result = await sandbox.run(parseRunCodeRequest(await request.json()));
    return Response.json({
      ms: Date.now() - started,
      reads: reads - before,
      ok: result.ok,
      error: result.error?.message,
      tests: result.tests.length,
    });
  },
};
