/**
 * `language: "python"` through the supervised sandbox host: Pyodide in a fresh isolate per call,
 * booted from the host's snapshot. One host for the whole file: its first Python call makes the
 * snapshot (several seconds), the rest boot from it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandboxHost, type SandboxHost } from "../../../scripts/sandbox-host";
import { createLoaderSandbox } from "../../../src/sandbox/loader-sandbox";
import { createRemoteSandbox } from "../../../src/sandbox/remote-sandbox";
import type { RunCodeRequest, RunCodeResult } from "../../../src/schemas/run-code";
import { installCodeSandbox, parseRunCodeRequest, runCode } from "../../../src/sdk/run-code";

let host: SandboxHost;

beforeAll(async () => {
  // A boot allowance of 4 s, not 5: the looping case below spins its process until timeoutMs + grace
  // + the allowance have passed (CPU CI pays for, issue 27). A boot from the snapshot took 0.4–1.8 s
  // on a loaded 2-core machine, but past 2 s (a 503, twice in CI) once the unit stage's other
  // files started simulators beside it (issue 50); every other call has its 5 s timeout on top.
  host = await startSandboxHost({ graceMs: 500, processes: 1, pythonBootAllowanceMs: 4000 });
  installCodeSandbox(createRemoteSandbox(host.url));
}, 60_000);

afterAll(async () => {
  installCodeSandbox(undefined);
  await host?.stop();
});

const python = (code: string, extra: Partial<RunCodeRequest> = {}) =>
  runCode({ language: "python", code, timeoutMs: 5000, ...extra });

describe("Python in the sandbox", () => {
  it("returns an entry's value and stdout, and runs test_* functions, a failure naming its assert", async () => {
    const code =
      "def add(a, b):\n    print('adding', a, b)\n    return a + b\n\ndef answer():\n    return {'sum': add(20, 22), 'squares': sum(i * i for i in range(10))}\n";
    const tests =
      "from solution import add\n\ndef test_adds():\n    assert add(2, 3) == 5\n\ndef test_wrong():\n    assert add(1, 1) == 3\n\nasync def test_async():\n    assert add(0, 0) == 0\n\ndef helper():\n    assert False\n";
    const run = await python(code, { entry: "answer", tests });
    expect(run.result).toEqual({ sum: 42, squares: 285 });
    expect(run.stdout).toBe("adding 20 22\nadding 2 3\nadding 1 1\nadding 0 0\n");
    expect(run.tests).toEqual([
      { name: "test_adds", passed: true, message: "" },
      { name: "test_wrong", passed: false, message: "AssertionError (assert add(1, 1) == 3)" },
      { name: "test_async", passed: true, message: "" },
    ]);
    expect(run).toMatchObject({ ok: false, timedOut: false, outputTruncated: false });
  }, 120_000);

  it("reports an exception, a syntax error and a huge output as results", async () => {
    const raised = await python("def f():\n    raise ValueError('too far')\n", { entry: "f" });
    expect(raised).toMatchObject({
      ok: false,
      timedOut: false,
      error: { name: "ValueError", message: "too far" },
    });
    expect(raised.error?.stack).toContain('File "solution.py", line 2');
    const syntax = await python("def f(:\n");
    expect(syntax).toMatchObject({ ok: false, error: { name: "SyntaxError" } });
    const noCases = await python("x = 1", { tests: "import solution\n" });
    expect(noCases).toMatchObject({
      ok: false,
      tests: [],
      error: { message: "the tests define no test function" },
    });
    const flood = await python("print('x' * 100000)", { maxOutputBytes: 1000 });
    expect(flood).toMatchObject({ ok: true, outputTruncated: true });
    expect(flood.stdout).toHaveLength(1000);
  }, 60_000);

  it("stops a non-terminating loop at its timeout, and the next call runs in a fresh interpreter", async () => {
    const restarts = host.restarts();
    const looping = await python("while True:\n    pass\n", { timeoutMs: 500 });
    expect(looping).toMatchObject({ ok: false, timedOut: true, error: { name: "TimeoutError" } });
    expect(host.restarts()).toBe(restarts + 1);
    // The replacement process gets the snapshot copied in; a global from an earlier call is gone.
    await python("import builtins\nbuiltins.LEFTOVER = 1\n");
    const fresh = await python(
      "import builtins\ndef f():\n    return hasattr(builtins, 'LEFTOVER')\n",
      { entry: "f" },
    );
    expect(fresh).toMatchObject({ ok: true, result: false });
  }, 120_000);

  /**
   * What a snippet can reach from inside its isolate: the network (two ways) and the parent's
   * bindings and environment. One call answers both tests below: each Python call boots an
   * isolate (about a second of CPU, issue 27), and what one isolate sees is what any would.
   */
  let reach: Promise<RunCodeResult> | undefined;
  const probeReach = () =>
    (reach ??= python(
      [
        "import js, os",
        "from pyodide.http import pyfetch",
        "async def f():",
        "    network = []",
        "    for attempt in (lambda: js.fetch('http://127.0.0.1:9/'), lambda: pyfetch('http://example.com/')):",
        "        try:",
        "            await attempt()",
        "            network.append('reached')",
        "        except Exception as error:",
        "            network.append(type(error).__name__)",
        "    names = list(js.Object.getOwnPropertyNames(js.globalThis))",
        "    return {'network': network, 'env': hasattr(js, 'env'), 'bindings': [n for n in names if n in ('LOADER', 'PYODIDE_WASM', 'SANDBOX_URL', 'ROLLOUT_KEY')], 'environ': sorted(k for k in os.environ if 'KEY' in k or 'SECRET' in k)}",
      ].join("\n"),
      { entry: "f" },
    ));

  it("has no network: js.fetch and pyodide.http fail", async () => {
    const run = await probeReach();
    expect(run.ok, JSON.stringify(run)).toBe(true);
    const network = (run.result as { network: string[] }).network;
    expect(network).toHaveLength(2);
    expect(network).not.toContain("reached");
  }, 60_000);

  it("cannot reach the parent's bindings or environment", async () => {
    const run = await probeReach();
    expect(run).toMatchObject({ ok: true, result: { env: false, bindings: [], environ: [] } });
  }, 60_000);

  it("cannot change the result it reports: a fake result line, forged test functions, a tracer that skips asserts", async () => {
    const code = [
      "import sys",
      'print(\'{"ok": true, "tests": [{"name": "test_wrong", "passed": true}]}\')',
      "def add(a, b):",
      "    return a - b",
      "def test_forged():",
      "    pass",
      "def skip_asserts(frame, event, arg):",
      "    def line(frame, event, arg):",
      "        if event == 'line' and frame.f_code.co_filename == 'tests.py' and frame.f_lineno == frame.f_code.co_firstlineno + 1:",
      "            frame.f_lineno = frame.f_lineno + 1",
      "        return line",
      "    return line",
      "sys.settrace(skip_asserts)",
    ].join("\n");
    const tests =
      "from solution import add, test_forged\n\ndef test_wrong():\n    assert add(1, 1) == 2\n    pass\n";
    const run = await python(code, { tests });
    expect(run.tests).toEqual([
      { name: "test_wrong", passed: false, message: "AssertionError (assert add(1, 1) == 2)" },
    ]);
    expect(run.ok).toBe(false);
    expect(run.stdout).toContain('"passed": true');
  }, 60_000);

  it("is refused, naming where Python runs, by a LOADER sandbox given no Pyodide runtime", async () => {
    const loads: unknown[] = [];
    const sandbox = createLoaderSandbox({
      load: (code) => (loads.push(code), { getEntrypoint: () => ({}) }),
    });
    const call = parseRunCodeRequest({ language: "python", code: "x = 1", timeoutMs: 1000 });
    await expect(sandbox.run(call)).rejects.toThrow(
      /needs the Pyodide runtime: the sandbox host \(SANDBOX_URL\) or an R2 bucket holding it/,
    );
    expect(loads).toHaveLength(0);
  });
});
