/**
 * @module bench:sandbox's Node arms, as a program the bench bundles and starts in a process of its
 * own (as the workerd arms run in theirs), so every arm is one loopback HTTP request timed from the
 * bench process. `serve` answers `POST /vm` (the call in a fresh `node:vm` context in this
 * process), `POST /spawn` (the call in a `node` subprocess started for it, which runs `once`) and
 * `POST /noop` (reads the body, answers `{}`: the HTTP round trip alone). `once` reads one call
 * from stdin and writes its result to stdout.
 *
 * A call runs the Worker Loader sandbox's own harness (src/sandbox/harness-module.ts) over the
 * same three modules, each compiled afresh per call as `vm.SourceTextModule`s in a new context, so
 * the JS arms differ in where the work runs, not in what it is. Needs `--experimental-vm-modules`.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import vm from "node:vm";
import { HARNESS_SOURCE } from "../../src/sandbox/harness-module";

/** The slice of a RunCodeInput these arms read (the bench sends JavaScript with tests). */
interface Call {
  code: string;
  tests: string;
  timeoutMs: number;
  maxOutputBytes?: number;
}

/** What a call answers: the harness's answer (`ok`, `tests`, …), or the failure that stopped it. */
type Answer = Record<string, unknown> & { tests: Array<{ passed: boolean }> };

const WORKER_ENTRYPOINT =
  "(class WorkerEntrypoint { constructor(ctx, env) { this.ctx = ctx; this.env = env; } })";

/**
 * One call: a new context, the harness, solution and tests compiled as new modules in it (nothing
 * cached across calls), `cloudflare:workers` a stand-in `WorkerEntrypoint`, then the harness's
 * `run`, as the loaded isolate's entrypoint is called.
 */
async function runInVm(call: Call): Promise<Answer> {
  // A new context has only ECMAScript's globals: the harness also uses TextEncoder and console.
  const context = vm.createContext({ TextEncoder, console: {} });
  const modules = new Map<string, vm.Module>();
  // Node hands back what this returns as is: a module is evaluated here, as an import evaluates it.
  const importModuleDynamically = (async (specifier: string) => {
    const module = modules.get(specifier);
    if (!module) throw new Error(`no module ${specifier}`);
    if (module.status === "linked") await module.evaluate();
    return module;
  }) as unknown as vm.SourceTextModuleOptions["importModuleDynamically"];
  const source = (identifier: string, text: string) =>
    new vm.SourceTextModule(text, { identifier, context, importModuleDynamically });
  const entrypoint = vm.runInContext(WORKER_ENTRYPOINT, context) as unknown;
  modules.set(
    "cloudflare:workers",
    new vm.SyntheticModule(
      ["WorkerEntrypoint"],
      function exportEntrypoint(this: vm.SyntheticModule) {
        this.setExport("WorkerEntrypoint", entrypoint);
      },
      { context },
    ),
  );
  modules.set("./solution.js", source("solution.js", call.code));
  modules.set("./tests.js", source("tests.js", call.tests));
  const harness = source("harness.js", HARNESS_SOURCE);
  const linker = (specifier: string) => {
    const found = modules.get(specifier);
    if (!found) throw new Error(`no module ${specifier}`);
    return found;
  };
  for (const module of [harness, modules.get("./solution.js")!, modules.get("./tests.js")!])
    await module.link(linker);
  await harness.evaluate({ timeout: call.timeoutMs });
  const Harness = (harness.namespace as { default: new (ctx: object, env: object) => unknown })
    .default;
  const instance = new Harness({}, {}) as {
    run(options: { entry: undefined; hasTests: boolean; maxOutputBytes: number }): Promise<Answer>;
  };
  // The harness's answer is an object of the context's realm: JSON makes it this realm's.
  const answer = await instance.run({
    entry: undefined,
    hasTests: true,
    maxOutputBytes: call.maxOutputBytes ?? 65_536,
  });
  return JSON.parse(JSON.stringify(answer)) as Answer;
}

/** One call in a `node` subprocess started for it (this bundle's `once`), killed past its timeout. */
function runInSubprocess(body: string, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--experimental-vm-modules", "--no-warnings", process.argv[1]!, "once"],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const guard = setTimeout(() => child.kill("SIGKILL"), timeoutMs + 1_000);
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(guard);
      if (code === 0) resolve(JSON.parse(out) as Answer);
      else reject(new Error(`the subprocess exited with ${code}`));
    });
    child.stdin.end(body);
  });
}

async function readAll(stream: AsyncIterable<Buffer | string>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

function serve(): void {
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readAll(request);
      let answer: unknown;
      try {
        if (request.url === "/noop") answer = {};
        else if (request.url === "/vm") answer = await runInVm(JSON.parse(body) as Call);
        else if (request.url === "/spawn")
          answer = await runInSubprocess(body, (JSON.parse(body) as Call).timeoutMs);
        else {
          response.writeHead(404).end();
          return;
        }
      } catch (error) {
        answer = { ok: false, error: { message: (error as Error).message }, tests: [] };
      }
      const text = JSON.stringify(answer);
      response.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      response.end(text);
    })();
  });
  server.listen(0, "127.0.0.1", () =>
    console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
  );
}

const mode = process.argv[2];
if (mode === "serve") serve();
else if (mode === "once")
  process.stdout.write(
    JSON.stringify(await runInVm(JSON.parse(await readAll(process.stdin)) as Call)),
  );
