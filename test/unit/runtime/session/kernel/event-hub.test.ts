import { describe, expect, it } from "vitest";
import {
  EventHub,
  type SseEvent,
  formatSse,
} from "../../../../../src/runtime/session/kernel/event-hub";

/** Reads a stream to its end; fails instead of hanging when the stream stays open. */
async function readToEnd(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`stream still open after: ${JSON.stringify(text)}`)),
        1_000,
      ).unref(),
    );
    const { value, done } = await Promise.race([reader.read(), timeout]);
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}

const step = (n: number): SseEvent => ({ id: String(n), event: "step", data: { step_index: n } });

describe("formatSse", () => {
  it("writes id, event and JSON data lines ending with a blank line", () => {
    expect(formatSse({ id: "7", event: "step", data: { reward: 1 } })).toBe(
      'id: 7\nevent: step\ndata: {"reward":1}\n\n',
    );
  });

  it("omits the id line when there is no id", () => {
    expect(formatSse({ event: "ping", data: null })).toBe("event: ping\ndata: null\n\n");
  });

  it("keeps data with newlines on a single data line", () => {
    const frame = formatSse({ event: "log", data: "line one\nline two\r\n" });
    expect(frame.split("\n").filter((line) => line.startsWith("data: "))).toHaveLength(1);
    expect(JSON.parse(frame.split("\n")[1]!.slice("data: ".length))).toBe("line one\nline two\r\n");
  });
});

describe("EventHub", () => {
  it("replays the backlog, then carries live events, then closes after the last", async () => {
    const hub = new EventHub();
    const stream = hub.subscribe([step(0), step(1)], false);
    expect(hub.size).toBe(1);
    hub.publish(step(2));
    hub.publish({ id: "3", event: "finished", data: { status: "succeeded" } }, true);
    expect(await readToEnd(stream)).toBe(
      ": connected\n\n" +
        [step(0), step(1), step(2)].map(formatSse).join("") +
        formatSse({ id: "3", event: "finished", data: { status: "succeeded" } }),
    );
    expect(hub.size).toBe(0);
  });

  it("closes right after the backlog when asked and does not register the stream", async () => {
    const hub = new EventHub();
    const stream = hub.subscribe([step(0)], true);
    expect(hub.size).toBe(0);
    hub.publish(step(1));
    expect(await readToEnd(stream)).toBe(": connected\n\n" + formatSse(step(0)));
  });

  it("sends each event to every open stream", async () => {
    const hub = new EventHub();
    const streams = [hub.subscribe([], false), hub.subscribe([step(0)], false)];
    hub.publish(step(1), true);
    const [first, second] = await Promise.all(streams.map(readToEnd));
    expect(first).toBe(": connected\n\n" + formatSse(step(1)));
    expect(second).toBe(": connected\n\n" + formatSse(step(0)) + formatSse(step(1)));
  });

  it("forgets a stream whose reader cancels and keeps publishing to the others", async () => {
    const hub = new EventHub();
    const gone = hub.subscribe([], false);
    const stays = hub.subscribe([], false);
    await gone.cancel();
    expect(hub.size).toBe(1);
    expect(() => hub.publish(step(0))).not.toThrow();
    hub.publish(step(1), true);
    expect(await readToEnd(stays)).toBe(
      ": connected\n\n" + formatSse(step(0)) + formatSse(step(1)),
    );
  });
});
