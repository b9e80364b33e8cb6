import { describe, expect, it } from "vitest";
import { openCallerStream } from "../../../src/gateway/caller-stream";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("openCallerStream", () => {
  it("hands what is written to the caller as an SSE response", async () => {
    const caller = openCallerStream();
    caller.write(bytes("data: 1\n\n"));
    caller.close();
    const response = caller.response(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(await response.text()).toBe("data: 1\n\n");
    expect(caller.gone).toBe(false);
  });

  it("is gone once the caller cancels its body, and drops later writes", async () => {
    const caller = openCallerStream();
    await caller.response(200).body!.cancel("hung up");
    await Promise.resolve();
    expect(caller.gone).toBe(true);
    expect(() => caller.write(bytes("late"))).not.toThrow();
  });

  it("is gone when the signal says the caller left", () => {
    const left = new AbortController();
    const caller = openCallerStream(left.signal);
    left.abort();
    expect(caller.gone).toBe(true);
  });
});
