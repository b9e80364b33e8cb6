/**
 * Integration: `language: "python"` on the Worker's own LOADER binding, the production path,
 * with Pyodide read from R2: the sandbox codeSandboxFor picks for a Worker without SANDBOX_URL,
 * over this workerd's TRAJECTORIES bucket with its reads and writes counted. Terminating snippets
 * only: a looping one would wedge this workerd (local workerd enforces no CPU limit).
 */
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { codeSandboxFor } from "../../../functions/code-sandbox";
import type { PyodideBucket } from "../../../src/sandbox/bucket-python-sandbox";
import {
  PYODIDE_FILE_NAMES,
  PYODIDE_PREFIX,
  pyodideSnapshotKey,
} from "../../../src/sandbox/pyodide-objects";
import { SANDBOX_COMPATIBILITY_DATE } from "../../../src/sandbox/loader-sandbox";
import type { CodeSandbox } from "../../../src/schemas/run-code";
import { parseRunCodeRequest } from "../../../src/sdk/run-code";

const KEYS = Object.values(PYODIDE_FILE_NAMES).map((name) => PYODIDE_PREFIX + name);

/** TRAJECTORIES with every get and put recorded by key. */
function countedBucket(): PyodideBucket & { gets: string[]; puts: string[] } {
  const gets: string[] = [];
  const puts: string[] = [];
  return {
    gets,
    puts,
    get: (key) => (gets.push(key), env.TRAJECTORIES.get(key)),
    put: (key, value) => (puts.push(key), env.TRAJECTORIES.put(key, value)),
  };
}

/** A LOADER sandbox the way the Worker builds one when SANDBOX_URL is not set. */
const loaderSandbox = (bucket: PyodideBucket): CodeSandbox =>
  codeSandboxFor({ LOADER: env.LOADER, TRAJECTORIES: bucket })!;

/** A call with an entry and a passing and a failing test. */
const ADD = parseRunCodeRequest({
  language: "python",
  code: "def add(a, b):\n    return a + b\n\ndef add_five():\n    print('five')\n    return add(2, 3)\n",
  entry: "add_five",
  tests:
    "from solution import add\n\ndef test_adds():\n    assert add(2, 3) == 5\n\ndef test_wrong():\n    assert add(1, 1) == 3\n",
  timeoutMs: 5000,
});
const call = (sandbox: CodeSandbox) => sandbox.run(ADD);

describe("Python on the LOADER path, Pyodide from R2", () => {
  afterAll(async () => {
    await env.TRAJECTORIES.delete([...KEYS, await pyodideSnapshotKey(SANDBOX_COMPATIBILITY_DATE)]);
  });

  it("answers a result naming the upload command while the files are not in the bucket", async () => {
    const bucket = countedBucket();
    const result = await call(loaderSandbox(bucket));
    expect(result).toMatchObject({
      ok: false,
      timedOut: false,
      tests: [],
      error: { name: "PythonRuntimeMissing" },
    });
    expect(result.error?.message).toContain("scripts/upload-pyodide.ts --remote");
    expect(result.error?.message).toContain(`${PYODIDE_PREFIX}pyodide.asm.wasm`);
    expect(bucket.puts).toEqual([]);
  });

  describe("with the files uploaded", () => {
    beforeAll(async () => {
      for (const key of KEYS) {
        const response = await fetch(`${inject("pyodideFilesUrl")}/${key}`);
        expect(response.status, key).toBe(200);
        await env.TRAJECTORIES.put(key, await response.arrayBuffer());
      }
    }, 60_000);

    it("runs the call, makes and stores the snapshot once, and reads nothing from R2 on the next call", async () => {
      const bucket = countedBucket();
      const sandbox = loaderSandbox(bucket);
      // One after another: concurrent snapshot boots hit a local workerd flake (docs/authoring.md, "Python").
      const first = await call(sandbox);
      const snapshotKey = await pyodideSnapshotKey(SANDBOX_COMPATIBILITY_DATE);
      expect(first).toMatchObject({ ok: false, result: 5, stdout: "five\n", timedOut: false });
      expect(first.tests).toEqual([
        { name: "test_adds", passed: true, message: "" },
        { name: "test_wrong", passed: false, message: "AssertionError (assert add(1, 1) == 3)" },
      ]);
      // One read of each file and of the (absent) snapshot, one write of the snapshot made.
      expect([...bucket.gets].sort()).toEqual([...KEYS, snapshotKey].sort());
      expect(bucket.puts).toEqual([snapshotKey]);
      expect((await env.TRAJECTORIES.head(snapshotKey))?.size).toBeGreaterThan(20_000_000);

      const later = await call(sandbox);
      expect(later).toMatchObject({ result: 5, tests: [{ passed: true }, { passed: false }] });
      expect(bucket.gets).toHaveLength(KEYS.length + 1);
      expect(bucket.puts).toHaveLength(1);
    }, 180_000);

    it("boots a new isolate's sandbox from the stored snapshot without making one", async () => {
      const bucket = countedBucket();
      const result = await call(loaderSandbox(bucket));
      expect(result).toMatchObject({ result: 5, tests: [{ passed: true }, { passed: false }] });
      expect(bucket.gets).toHaveLength(KEYS.length + 1);
      expect(bucket.puts).toEqual([]);
    }, 60_000);
  });
});
