/** Unit: ReattachableCalls, which holds a resumed call's answer for the caller that comes back (by call id or by the exact request). */
import { describe, expect, it } from "vitest";
import {
  HELD_AFTER_END_MS,
  ReattachableCalls,
} from "../../../../../src/runtime/session/calls/reattach";
import type { GatewayCallResult } from "../../../../../src/runtime/session/calls/gateway-call";

const encoder = new TextEncoder();

/** A stream whose bytes and end the test decides. */
function controlledStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
  });
  return {
    stream,
    push: (text: string) => controller.enqueue(encoder.encode(text)),
    close: () => controller.close(),
  };
}

/** Lets the held call's reader take what was pushed. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Reads a stream to its end; fails instead of hanging when it stays open. */
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

function streamOf(result: GatewayCallResult): ReadableStream<Uint8Array> {
  if (!("stream" in result)) throw new Error(`not a stream: ${JSON.stringify(result)}`);
  return result.stream;
}

const json = (text: string): Promise<GatewayCallResult> =>
  Promise.resolve({ ok: true, json: text });

describe("ReattachableCalls", () => {
  it("replays every byte of a streamed answer so far to a caller claiming it mid-stream, then follows it to its end", async () => {
    const calls = new ReattachableCalls();
    const upstream = controlledStream();
    const held = calls.hold(
      "r/gw/a",
      "key",
      Promise.resolve({ ok: true, stream: upstream.stream }),
    );
    upstream.push("data: 1\n\n");
    upstream.push("data: 2\n\n");
    await settle();
    const claimed = calls.claim("r/gw/a", "key");
    expect(claimed).toBeDefined();
    const reading = readToEnd(streamOf(await claimed!));
    upstream.push("data: 3\n\n");
    upstream.push("data: [DONE]\n\n");
    upstream.close();
    expect(await reading).toBe("data: 1\n\ndata: 2\n\ndata: 3\n\ndata: [DONE]\n\n");
    await held;
  });

  it("gives a caller claiming after the stream ended the whole answer, closed", async () => {
    const calls = new ReattachableCalls();
    const upstream = controlledStream();
    const held = calls.hold(
      "r/gw/a",
      "key",
      Promise.resolve({ ok: true, stream: upstream.stream }),
    );
    upstream.push("data: x\n\n");
    upstream.close();
    await held;
    expect(await readToEnd(streamOf(await calls.claim("r/gw/a", "other key")!))).toBe(
      "data: x\n\n",
    );
  });

  it("reads a held stream to its end whether or not anyone claims it", async () => {
    const calls = new ReattachableCalls();
    const upstream = controlledStream();
    const held = calls.hold(
      "r/gw/a",
      "key",
      Promise.resolve({ ok: true, stream: upstream.stream }),
    );
    upstream.push("data: 1\n\n");
    upstream.close();
    await expect(held).resolves.toBeUndefined();
  });

  it("passes a held stream's failure on to the caller following it, after the bytes that came before", async () => {
    const calls = new ReattachableCalls();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const upstream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    const held = calls.hold("r/gw/a", "key", Promise.resolve({ ok: true, stream: upstream }));
    controller.enqueue(encoder.encode("data: 1\n\n"));
    await settle();
    const reader = streamOf(await calls.claim("r/gw/a", "key")!).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: 1\n\n");
    controller.error(new Error("upstream reset"));
    await expect(reader.read()).rejects.toThrow("upstream reset");
    await held;
  });

  it("finds a held answer by its call id, whatever the request's key", async () => {
    const calls = new ReattachableCalls();
    void calls.hold("r/gw/one", "key one", json('{"n":1}'));
    void calls.hold("r/gw/two", "key two", json('{"n":2}'));
    expect(await calls.claim("r/gw/two", "key one")).toEqual({ ok: true, json: '{"n":2}' });
  });

  it("without a call id, matches only the exact request key, and only once", async () => {
    const calls = new ReattachableCalls();
    void calls.hold("r/gw/a", '/chat/completions\n{"x":1}', json("A"));
    expect(calls.claim(null, '/chat/completions\n{"x":2}')).toBeUndefined();
    expect(calls.claim(null, '/completions\n{"x":1}')).toBeUndefined();
    expect(await calls.claim(null, '/chat/completions\n{"x":1}')).toEqual({ ok: true, json: "A" });
    expect(calls.claim(null, '/chat/completions\n{"x":1}')).toBeUndefined();
  });

  it("gives out each held answer once: claimed twice by id, the second claim is undefined", async () => {
    const calls = new ReattachableCalls();
    void calls.hold("r/gw/a", "key", json("A"));
    expect(await calls.claim("r/gw/a", "key")).toEqual({ ok: true, json: "A" });
    expect(calls.claim("r/gw/a", "key")).toBeUndefined();
    expect(calls.claim(null, "key")).toBeUndefined();
  });

  it("does not give an answer claimed by id to a caller matching its key", async () => {
    const calls = new ReattachableCalls();
    void calls.hold("r/gw/a", "key", json("A"));
    await calls.claim("r/gw/a", "key");
    expect(calls.claim(null, "key")).toBeUndefined();
  });

  it("returns a JSON answer as it is, once its promise resolves", async () => {
    const calls = new ReattachableCalls();
    let resolve!: (result: GatewayCallResult) => void;
    const answer = new Promise<GatewayCallResult>((r) => {
      resolve = r;
    });
    void calls.hold("r/gw/a", "key", answer);
    const claimed = calls.claim("r/gw/a", "key");
    expect(claimed).toBeDefined();
    resolve({ ok: true, json: '{"choices":[]}' });
    expect(await claimed).toEqual({ ok: true, json: '{"choices":[]}' });
  });

  it("returns an error answer as it is", async () => {
    const calls = new ReattachableCalls();
    const failed: GatewayCallResult = {
      ok: false,
      error: { name: "ConflictError", code: "conflict", status: 409, message: "ended" },
    };
    void calls.hold("r/gw/a", "key", Promise.resolve(failed));
    expect(await calls.claim("r/gw/a", "key")).toEqual(failed);
  });

  it("drops an answer nobody claimed within HELD_AFTER_END_MS of its end", async () => {
    let now = 0;
    const calls = new ReattachableCalls(() => now);
    await calls.hold("r/gw/late", "late key", json("late"));
    await calls.hold("r/gw/kept", "kept key", json("kept"));
    now = HELD_AFTER_END_MS;
    expect(await calls.claim("r/gw/kept", "kept key")).toEqual({ ok: true, json: "kept" });
    now = HELD_AFTER_END_MS + 1;
    expect(calls.claim("r/gw/late", "late key")).toBeUndefined();
    expect(calls.claim(null, "late key")).toBeUndefined();
  });

  it("keeps a streamed answer that has not ended however long it runs", async () => {
    let now = 0;
    const calls = new ReattachableCalls(() => now);
    const upstream = controlledStream();
    void calls.hold("r/gw/a", "key", Promise.resolve({ ok: true, stream: upstream.stream }));
    upstream.push("data: 1\n\n");
    await settle();
    now = 10 * HELD_AFTER_END_MS;
    const claimed = calls.claim("r/gw/a", "key");
    expect(claimed).toBeDefined();
    const reading = readToEnd(streamOf(await claimed!));
    upstream.close();
    expect(await reading).toBe("data: 1\n\n");
  });

  it("answers undefined for an id it holds nothing for (a new call)", () => {
    const calls = new ReattachableCalls();
    void calls.hold("r/gw/a", "key", json("A"));
    expect(calls.claim("r/gw/unknown", "key")).toBeUndefined();
    expect(new ReattachableCalls().claim(null, "key")).toBeUndefined();
  });
});
