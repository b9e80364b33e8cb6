/**
 * @module The Worker bench:sandbox loads into workerd: `POST /loop {input, n}` runs `n` calls one
 * after another through the LOADER binding (a fresh isolate each) and answers each call's time, so
 * the numbers are the loader's own, without an HTTP hop per call.
 */
import { createLoaderSandbox, type LoaderBinding } from "../src/sandbox/loader-sandbox";
import { parseRunCodeRequest } from "../src/sdk/run-code";

export default {
  async fetch(request: Request, env: { LOADER: LoaderBinding }): Promise<Response> {
    const { input, n } = (await request.json()) as { input: unknown; n: number };
    const sandbox = createLoaderSandbox(env.LOADER);
    const parsed = parseRunCodeRequest(input);
    const durations: number[] = [];
    let failures = 0;
    for (let i = 0; i < n; i++) {
      // performance.now() only advances across I/O in workerd; Date.now() does too, and an isolate load is I/O.
      const started = Date.now();
      const result = await sandbox.run(parsed);
      durations.push(Date.now() - started);
      if (!result.tests.every((one) => one.passed)) failures++;
    }
    return Response.json({ durations, failures });
  },
};
