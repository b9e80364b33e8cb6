import { InvalidArgumentError } from "commander";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../tools/cli/errors";
import { resolveInterruptPolicy } from "../../../tools/cli/interrupt";
import {
  checkBatchId,
  DEFAULT_URL,
  integerIn,
  jsonObject,
  newBatchId,
  oneOf,
  resolveConnection,
} from "../../../tools/cli/options";

describe("command-line value parsing (unit)", () => {
  it("accepts integers in range and names the option when a value is out of range or not an integer", () => {
    const n = integerIn("--n", 1, 64);
    expect(n("8")).toBe(8);
    expect(() => n("0")).toThrow(
      new InvalidArgumentError('--n must be an integer between 1 and 64 (got "0")'),
    );
    expect(() => n("65")).toThrow(/between 1 and 64/);
    expect(() => n("2.5")).toThrow(/--n must be an integer/);
    expect(() => n("")).toThrow(/--n must be an integer/);
    expect(() => integerIn("--limit", 1)("abc")).toThrow(
      '--limit must be an integer >= 1 (got "abc")',
    );
  });

  it("accepts only listed choices and JSON objects", () => {
    expect(oneOf("--format", ["atif", "json"])("atif")).toBe("atif");
    expect(() => oneOf("--format", ["atif", "json"])("csv")).toThrow(
      "--format must be one of atif, json",
    );
    expect(jsonObject("--config")('{"max_steps": 3}')).toEqual({ max_steps: 3 });
    expect(() => jsonObject("--config")("[1]")).toThrow("--config must be a JSON object");
    expect(() => jsonObject("--config")("{oops")).toThrow("not valid JSON");
  });

  it("takes --url, else EDGE_ROLLOUT_URL, else the local default, and --token, else EDGE_ROLLOUT_TOKEN", () => {
    expect(resolveConnection({}, {})).toEqual({ url: DEFAULT_URL, token: undefined });
    expect(
      resolveConnection({}, { EDGE_ROLLOUT_URL: "https://x.example/", EDGE_ROLLOUT_TOKEN: "t" }),
    ).toEqual({ url: "https://x.example", token: "t" });
    expect(
      resolveConnection(
        { url: "http://h:1", token: "mine" },
        { EDGE_ROLLOUT_URL: "https://x.example", EDGE_ROLLOUT_TOKEN: "t" },
      ),
    ).toEqual({ url: "http://h:1", token: "mine" });
    expect(() => resolveConnection({ url: "ftp://h" }, {})).toThrow(UsageError);
    expect(() => resolveConnection({ url: "not a url" }, {})).toThrow(
      "--url must be an http(s) URL",
    );
  });

  it("validates batch ids with room for a chunk suffix and generates valid ones", () => {
    expect(checkBatchId("run-1.a:b_c")).toBe("run-1.a:b_c");
    expect(() => checkBatchId("has space")).toThrow(UsageError);
    expect(() => checkBatchId("x".repeat(155), 12)).toThrow("1-148 characters");
    const id = newBatchId(new Date("2026-01-02T03:04:05.678Z"), () => 0.5);
    expect(id).toBe("cli-20260102T030405Z-7fffff");
    expect(checkBatchId(id)).toBe(id);
  });

  it("asks on a terminal, leaves a batch running without one, and cancels with --yes or --on-interrupt cancel", () => {
    expect(resolveInterruptPolicy({}, true)).toBe("ask");
    expect(resolveInterruptPolicy({}, false)).toBe("leave");
    expect(resolveInterruptPolicy({ yes: true }, false)).toBe("cancel");
    expect(resolveInterruptPolicy({ yes: true, onInterrupt: "leave" }, true)).toBe("leave");
    expect(resolveInterruptPolicy({ onInterrupt: "ask" }, false)).toBe("leave");
    expect(resolveInterruptPolicy({ onInterrupt: "cancel" }, true)).toBe("cancel");
  });
});
