/**
 * @module The gateway's native stream plumbing in workerd (IdentityTransformStream, tee), where
 * Node's tests cannot reach it: a replica's lease ends once, and says whether the connection failed
 * (a reader's cancel is not a failure, also on a fetched body, whose native pipe cannot tell);
 * a streamed reply still starts with the chunk read for its first-byte deadline.
 */
import { describe, expect, inject, it } from "vitest";
import { withFirstChunk } from "../../../src/gateway/backends/first-chunk";
import { holdUntilBodyEnds } from "../../../src/gateway/backends/upstream-stream";

const encoder = new TextEncoder();

/** A body of `chunks`, then an error instead of its end when `failAfter` is set. */
function body(chunks: string[], failAfter = false): Response {
  let at = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at < chunks.length) return controller.enqueue(encoder.encode(chunks[at++]!));
        if (failAfter) controller.error(new Error("connection reset"));
        else controller.close();
      },
    }),
  );
}

function ends(): { calls: boolean[]; onEnd: (failed: boolean) => void } {
  const calls: boolean[] = [];
  return { calls, onEnd: (failed) => void calls.push(failed) };
}

const settle = () => new Promise((done) => setTimeout(done, 20));

/** A streamed chat answer fetched from the paced simulator (25 ms a token), so it is still running when cut. */
function pacedStream(signal?: AbortSignal): Promise<Response> {
  return fetch(`${inject("pacedSimulatorUrl")}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "sim-qwen3",
      messages: [{ role: "user", content: "Tell me a story." }],
      max_tokens: 80,
      stream: true,
    }),
    ...(signal ? { signal } : {}),
  });
}

describe("holdUntilBodyEnds in workerd", () => {
  it("ends once, not failed, when the body is read to its end, with every byte passed on", async () => {
    const seen = ends();
    const response = holdUntilBodyEnds(body(["data: a\n\n", "data: b\n\n"]), seen.onEnd);
    expect(await response.text()).toBe("data: a\n\ndata: b\n\n");
    await settle();
    expect(seen.calls).toEqual([false]);
  });

  it("ends not failed when the reader cancels, and failed when the connection breaks mid-stream", async () => {
    const cancelled = ends();
    const reader = holdUntilBodyEnds(
      body(["one", "two", "three"]),
      cancelled.onEnd,
    ).body!.getReader();
    await reader.read();
    await reader.cancel("caller left");
    await settle();
    expect(cancelled.calls).toEqual([false]);

    const broken = ends();
    await expect(holdUntilBodyEnds(body(["one"], true), broken.onEnd).text()).rejects.toThrow();
    await settle();
    expect(broken.calls).toEqual([true]);
  });

  it("ends not failed when the reader cancels a fetched body, also one teed for its first chunk", async () => {
    for (const open of [pacedStream, async () => withFirstChunk(await pacedStream())]) {
      const seen = ends();
      const reader = holdUntilBodyEnds(await open(), seen.onEnd).body!.getReader();
      await reader.read();
      await reader.cancel("interrupted by a weight sync");
      await settle();
      expect(seen.calls).toEqual([false]);
    }
    const unread = ends();
    await holdUntilBodyEnds(await pacedStream(), unread.onEnd).body!.cancel("caller left");
    await settle();
    expect(unread.calls).toEqual([false]);
  });

  it("ends failed when a fetched body's connection is torn down mid-stream", async () => {
    const connection = new AbortController();
    const seen = ends();
    const reader = holdUntilBodyEnds(
      await pacedStream(connection.signal),
      seen.onEnd,
    ).body!.getReader();
    await reader.read();
    connection.abort(new Error("connection reset"));
    await settle();
    expect(seen.calls).toEqual([true]);
  });
});

describe("withFirstChunk in workerd", () => {
  it("waits for the first chunk and hands on a body that still starts with it", async () => {
    const response = await withFirstChunk(body(["first ", "second ", "third"]));
    expect(await response.text()).toBe("first second third");
  });

  it("rejects when the body fails before its first chunk", async () => {
    await expect(withFirstChunk(body([], true))).rejects.toThrow(/connection reset/);
  });
});
