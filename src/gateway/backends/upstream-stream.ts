/** @module Keeps a replica's in-flight slot held while a streamed answer is still being read. */

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
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
