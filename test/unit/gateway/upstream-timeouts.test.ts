import { describe, expect, it } from "vitest";
import {
  attemptTimeoutMs,
  DEFAULT_UPSTREAM_TIMEOUTS,
  upstreamTimeoutsFrom,
} from "../../../src/gateway/upstream-timeouts";

describe("attemptTimeoutMs (unit)", () => {
  const timeouts = { firstByteMs: 1_000, msPerToken: 10 };

  it("bounds a stream by its first byte alone and a whole reply by its token allowance too", () => {
    expect(attemptTimeoutMs(timeouts, { stream: true, max_tokens: 500 })).toBe(1_000);
    expect(attemptTimeoutMs(timeouts, { stream: false, max_tokens: 500 })).toBe(6_000);
    expect(attemptTimeoutMs(timeouts, { stream: false })).toBe(1_000 + 10 * 4096);
  });
});

describe("upstreamTimeoutsFrom (unit)", () => {
  it("keeps the defaults for unset vars and reads whole milliseconds", () => {
    expect(upstreamTimeoutsFrom({})).toEqual(DEFAULT_UPSTREAM_TIMEOUTS);
    expect(
      upstreamTimeoutsFrom({ UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "2500", UPSTREAM_MS_PER_TOKEN: "" }),
    ).toEqual({ firstByteMs: 2_500, msPerToken: DEFAULT_UPSTREAM_TIMEOUTS.msPerToken });
  });

  it("names the variable that is not a number of milliseconds", () => {
    expect(() => upstreamTimeoutsFrom({ UPSTREAM_MS_PER_TOKEN: "fast" })).toThrow(
      /UPSTREAM_MS_PER_TOKEN/,
    );
    expect(() => upstreamTimeoutsFrom({ UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "0" })).toThrow(
      /UPSTREAM_FIRST_BYTE_TIMEOUT_MS/,
    );
  });
});
