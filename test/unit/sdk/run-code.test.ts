import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/errors";
import type { RunCodeInput, RunCodeResult } from "../../../src/schemas/run-code";
import { installCodeSandbox, runCode } from "../../../src/sdk/run-code";

const VALID = { language: "javascript", code: "export const x = 1;", timeoutMs: 1000 } as const;

/** A sandbox that records what reached it. */
function recordingSandbox(seen: RunCodeInput[]) {
  return {
    async run(input: RunCodeInput): Promise<RunCodeResult> {
      seen.push(input);
      return {
        ok: true,
        stdout: "",
        stderr: "",
        timedOut: false,
        outputTruncated: false,
        durationMs: 1,
        tests: [],
      };
    },
  };
}

async function rejection(request: unknown): Promise<InvalidInputError> {
  const error = await runCode(request as never).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  return error as InvalidInputError;
}

describe("runCode input validation", () => {
  const seen: RunCodeInput[] = [];
  installCodeSandbox(recordingSandbox(seen));
  afterEach(() => {
    seen.length = 0;
  });

  it("rejects code that is not a string, naming the field, before any sandbox is reached", async () => {
    const error = await rejection({ ...VALID, code: 42 });
    expect(error.message).toContain("code must be a string");
    expect(error.details).toEqual([{ path: "code", message: "code must be a string" }]);
    expect(seen).toHaveLength(0);
  });

  it("rejects code over 1 MB (counted in UTF-8 bytes) and tests over 1 MB", async () => {
    expect((await rejection({ ...VALID, code: "é".repeat(500_001) })).message).toContain(
      "code must be at most 1000000 bytes",
    );
    expect((await rejection({ ...VALID, tests: "x".repeat(1_000_001) })).message).toContain(
      "tests must be at most 1000000 bytes",
    );
    expect(seen).toHaveLength(0);
  });

  it("rejects a timeoutMs outside 1..60000 and a language it does not run", async () => {
    expect((await rejection({ ...VALID, timeoutMs: 0 })).message).toContain(
      "timeoutMs must be >= 1",
    );
    expect((await rejection({ ...VALID, timeoutMs: 60_001 })).message).toContain(
      "timeoutMs must be <= 60000",
    );
    expect((await rejection({ ...VALID, timeoutMs: 1.5 })).message).toContain(
      "timeoutMs must be an integer",
    );
    expect((await rejection({ ...VALID, language: "ruby" })).message).toContain(
      'language must be "javascript", "typescript" or "python"',
    );
    expect(seen).toHaveLength(0);
  });

  it("passes a valid call on with the default output limit", async () => {
    await runCode({ ...VALID, timeoutMs: 60_000 });
    expect(seen).toEqual([{ ...VALID, timeoutMs: 60_000, maxOutputBytes: 65_536 }]);
  });
});
