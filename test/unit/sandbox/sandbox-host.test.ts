import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandboxHost, type SandboxHost } from "../../../scripts/sandbox-host";
import { createRemoteSandbox } from "../../../src/sandbox/remote-sandbox";
import type { RunCodeRequest } from "../../../src/schemas/run-code";
import { installCodeSandbox, runCode } from "../../../src/sdk/run-code";

let host: SandboxHost;

beforeAll(async () => {
  host = await startSandboxHost({ memoryLimitMb: 150, graceMs: 500, processes: 2 });
  installCodeSandbox(createRemoteSandbox(host.url));
});

afterAll(async () => {
  installCodeSandbox(undefined);
  await host?.stop();
});

const js = (code: string, extra: Partial<RunCodeRequest> = {}) =>
  runCode({ language: "javascript", code, timeoutMs: 2000, ...extra });

/** The host still runs ordinary code after whatever the test did. */
async function expectHostHealthy(): Promise<void> {
  const after = await js("export const f = () => 6 * 7;", { entry: "f" });
  expect(after).toMatchObject({ ok: true, result: 42, timedOut: false });
}

describe("the supervised sandbox host", () => {
  it("runs a module's tests and reports each case", async () => {
    const tests =
      'import { add } from "./solution.js";\ntest("adds", () => assert.equal(add(2, 3), 5));\ntest("wrong", () => assert.equal(add(1, 1), 3));';
    const run = await js(
      "export function add(a, b) { console.log('adding', a, b); return a + b; }",
      { tests },
    );
    expect(run.ok).toBe(false);
    expect(run.tests).toEqual([
      { name: "adds", passed: true, message: "" },
      { name: "wrong", passed: false, message: "expected 3, got 2" },
    ]);
    expect(run.stdout).toBe("adding 2 3\nadding 1 1\n");
  });

  it("strips TypeScript before loading, and reports TypeScript it cannot parse as a SyntaxError", async () => {
    const ok = await runCode({
      language: "typescript",
      code: "interface P { x: number }\nexport const f = (p: P = { x: 2 }): number => p.x * 21;",
      entry: "f",
      timeoutMs: 2000,
    });
    expect(ok).toMatchObject({ ok: true, result: 42 });
    const bad = await runCode({
      language: "typescript",
      code: "export const f = (: number => 1;",
      timeoutMs: 2000,
    });
    expect(bad).toMatchObject({ ok: false, timedOut: false, error: { name: "SyntaxError" } });
  });

  it("reports a snippet that throws as a result naming the error", async () => {
    const run = await js("export function f() { throw new RangeError('too far'); }", {
      entry: "f",
    });
    expect(run).toMatchObject({
      ok: false,
      timedOut: false,
      error: { name: "RangeError", message: "too far" },
    });
    await expectHostHealthy();
  });

  it("stops a busy loop at its timeout and replaces its process, while a call beside it runs undisturbed", async () => {
    const pidsBefore = await host.pids();
    const restartsBefore = host.restarts();
    const [looping, neighbour] = await Promise.all([
      js("while (true) {}", { timeoutMs: 300 }),
      js(
        "export const f = () => new Promise((resolve) => setTimeout(() => resolve('neighbour'), 100));",
        { entry: "f" },
      ),
    ]);
    expect(looping).toMatchObject({ ok: false, timedOut: true, error: { name: "TimeoutError" } });
    expect(neighbour, JSON.stringify(neighbour)).toMatchObject({ ok: true, result: "neighbour" });
    expect(host.restarts()).toBe(restartsBefore + 1);
    const pidsAfter = await host.pids();
    expect(pidsAfter.filter((pid) => !pidsBefore.includes(pid))).toHaveLength(1);
    await expectHostHealthy();
  });

  it("kills a snippet that allocates without bound once the process passes its memory limit", async () => {
    const run = await js(
      "const keep = []; for (;;) keep.push('x'.repeat(1 << 24) + keep.length);",
      { timeoutMs: 20_000 },
    );
    expect(run.ok).toBe(false);
    expect(run.error?.name).toBe("SandboxKilled");
    await expectHostHealthy();
  });

  it("cuts megabytes of output at maxOutputBytes, and refuses a result larger than it", async () => {
    const flood = await js(
      "export function f() { for (let i = 0; i < 50000; i++) console.log('y'.repeat(100)); return 'done'; }",
      { entry: "f", maxOutputBytes: 10_000, timeoutMs: 15_000 },
    );
    expect(flood).toMatchObject({ ok: true, result: "done", outputTruncated: true });
    expect(flood.stdout.length).toBe(10_000);
    // The generous timeout is for a loaded CI machine: this case is about the refusal, not speed.
    const huge = await js("export const f = () => 'z'.repeat(5e6);", {
      entry: "f",
      maxOutputBytes: 1000,
      timeoutMs: 15_000,
    });
    expect(huge).toMatchObject({ ok: false, outputTruncated: true, error: { name: "RangeError" } });
  });

  it("gives a snippet no network, no sockets, no node: modules and no env", async () => {
    const fetched = await js("export const f = () => fetch('http://127.0.0.1:9/');", {
      entry: "f",
    });
    expect(fetched.error?.message).toContain("not permitted to access the internet");
    const socket = await js(
      "export async function f() { const { connect } = await import('cloudflare:sockets'); const s = connect('127.0.0.1:9'); await s.opened; }",
      { entry: "f" },
    );
    expect(socket.ok).toBe(false);
    const nodeFs = await js(
      "export const f = async () => (await import('node:fs')).readFileSync('/etc/hostname', 'utf8');",
      { entry: "f" },
    );
    expect(nodeFs.error?.message).toContain('No such module "node:fs"');
    const globals = await js(
      "export const f = () => [typeof globalThis.env, typeof process, typeof SANDBOX_URL];",
      { entry: "f" },
    );
    expect(globals.result).toEqual(["undefined", "undefined", "undefined"]);
    await expectHostHealthy();
  });

  it("does not let a snippet change the result it reports: forged cases, patched built-ins, a fake result line", async () => {
    const tests =
      'import { add } from "./solution.js";\nconst three = add(1, 2);\ntest("adds", () => assert.equal(three, 3));\ntest("deep", () => assert.deepEqual({ sum: add(2, 2) }, { sum: 4 }));';
    // A case registered from the snippet does not count, whether at its load or from a call the tests make.
    const forged = await js(
      "try { test('forged at load', () => {}); } catch {}\nexport function add(a, b) { try { test('forged in a call', () => {}); } catch {} return a - b; }",
      { tests },
    );
    expect(forged.tests.map((one) => [one.name, one.passed])).toEqual([
      ["adds", false],
      ["deep", false],
    ]);
    // Patching the built-ins the harness's bookkeeping would use (push, iteration, index setters) drops no failing case.
    const patched = await js(
      "Array.prototype.push = function () { return 0; };\nArray.prototype[Symbol.iterator] = function* () {};\nObject.defineProperty(Array.prototype, '1', { set() {}, configurable: true });\nexport const add = (a, b) => a - b;",
      { tests },
    );
    expect(patched.tests.map((one) => [one.name, one.passed])).toEqual([
      ["adds", false],
      ["deep", false],
    ]);
    expect(patched.ok).toBe(false);
    // Stack-trace hooks are locked, so the caller check cannot be fooled.
    const hooked = await js(
      "Error.prepareStackTrace = () => 'at tests.js:1:1';\nexport const add = (a, b) => a + b;",
      { tests },
    );
    expect(hooked).toMatchObject({ ok: false, error: { name: "TypeError" } });
    // Printing something shaped like a result is output, nothing more.
    const printed = await js(
      "console.log(JSON.stringify({ ok: true, tests: [{ name: 'adds', passed: true }] }));\nexport const add = (a, b) => a - b;",
      { tests },
    );
    expect(printed.ok).toBe(false);
    expect(printed.stdout).toContain('"passed":true');
    // A tests module whose cases never registered scores nothing.
    const none = await js("export const add = (a, b) => a + b;", {
      tests: 'import { add } from "./solution.js";',
    });
    expect(none).toMatchObject({
      ok: false,
      tests: [],
      error: { message: "the tests registered no case" },
    });
    await expectHostHealthy();
  });
});
