/** @module Keeps a replica's in-flight slot held while a streamed answer is still being read. */

/** workerd's native pass-through stream (absent in Node, where a JS stream serves). */
type IdentityStreamConstructor = new () => {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
};

/**
 * The same response whose body calls `onEnd` exactly once: `false` when the stream finished or
 * the reader cancelled it, `true` when reading it failed (the connection dropped mid-stream).
 * A body nobody reads or cancels never ends; the replica's lease TTL covers that case.
 */
export function holdUntilBodyEnds(response: Response, onEnd: (failed: boolean) => void): Response {
  let ended = false;
  const end = (failed: boolean): void => {
    if (ended) return;
    ended = true;
    onEnd(failed);
  };
  const upstream = response.body;
  if (upstream === null) {
    end(false);
    return response;
  }
  const Identity = (globalThis as { IdentityTransformStream?: IdentityStreamConstructor })
    .IdentityTransformStream;
  if (Identity) {
    // workerd: piped natively, no JS per chunk (a JS stream re-enqueueing each chunk cost ~20 µs a
    // chunk there, 33 ms of CPU for a streamed 1,536-token call). How the pipe ended is told by the
    // source: a reader that cancelled left it cancelled (cancelling again resolves), a dropped
    // connection left it errored (cancelling again rejects).
    const { readable, writable } = new Identity();
    upstream.pipeTo(writable).then(
      () => end(false),
      (reason: unknown) =>
        upstream.cancel(reason).then(
          () => end(false),
          () => end(true),
        ),
    );
    return new Response(readable, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
  const reader = upstream.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        end(true);
        controller.error(error);
        return;
      }
      if (chunk.done) {
        end(false);
        controller.close();
      } else {
        controller.enqueue(chunk.value);
      }
    },
    cancel(reason) {
      end(false);
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
