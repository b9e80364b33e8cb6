/**
 * The `vllm` backend's streamed calls in Node (holdUntilBodyEnds' JS path): a reader that stops
 * reading (a caller gone, a weight sync's interrupt) frees the replica's slot and leaves it
 * healthy; a connection dropped mid-stream marks the replica unhealthy.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { backendRegistry } from "../../../../src/gateway/backends";
import type { ModelBackend } from "../../../../src/gateway/model-backend";
import { chatBody, depsWith, manualClock } from "./backend-fixtures";

/** A loopback upstream streaming an SSE event every 10 ms; with `dropAfter`, its socket is destroyed after that many. */
async function startStreamingUpstream(
  dropAfter?: number,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream" });
    let sent = 0;
    const timer = setInterval(() => {
      if (dropAfter !== undefined && sent === dropAfter) {
        clearInterval(timer);
        res.socket?.destroy();
        return;
      }
      res.write(`data: {"n":${sent++}}\n\n`);
    }, 10);
    res.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

/** A `vllm` backend over one upstream, and a stream it opened, read up to its first chunk. */
async function openedStream(dropAfter?: number) {
  const upstream = await startStreamingUpstream(dropAfter);
  servers.push(upstream.server);
  const backend: ModelBackend = backendRegistry.create(
    { name: "vllm", replicas: [upstream.url] },
    depsWith(manualClock().now),
  );
  const { response } = await backend.openStream("/chat/completions", chatBody("hi"), {
    rolloutId: "r-1",
  });
  const reader = response.body!.getReader();
  expect((await reader.read()).done).toBe(false);
  return { backend, reader, url: upstream.url };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 30));

describe("a streamed call's replica in Node", () => {
  it("stays healthy and frees its slot when the reader cancels mid-stream", async () => {
    const { backend, reader, url } = await openedStream();
    expect(backend.health!()).toEqual([{ replica: url, healthy: true, in_flight: 1 }]);
    // A read left pending, as the gateway's pump leaves one when an interrupt cancels it.
    const pending = reader.read();
    await reader.cancel("interrupted by a weight sync");
    expect((await pending).done).toBe(true);
    await settle();
    expect(backend.health!()).toEqual([{ replica: url, healthy: true, in_flight: 0 }]);
  });

  it("is marked unhealthy when its connection drops mid-stream", async () => {
    const { backend, reader, url } = await openedStream(2);
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
    ).rejects.toThrow();
    await settle();
    expect(backend.health!()).toEqual([{ replica: url, healthy: false, in_flight: 0 }]);
  });
});
