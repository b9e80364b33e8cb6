/** @module Keeps a replica's in-flight slot held while a streamed answer is still being read. */

/** workerd's native pass-through stream (absent in Node, where a JS stream serves). */
type IdentityStreamConstructor = new () => {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
};

/**
 * The same response whose body calls `onEnd` exactly once: `false` when the stream finished or
 * the reader cancelled it (`getReader().cancel()` or `body.cancel()`: a caller gone, a weight
 * sync's interrupt), `true` when reading it failed (the connection dropped mid-stream).
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
    // chunk there, 33 ms of CPU for a streamed 1,536-token call). The native pipe cannot say which
    // side ended it: a reader's cancel and a dropped connection both reject it with that side's
    // error and leave the source errored (`preventCancel` and `preventAbort` are ignored), so the
    // readable notes its reader's cancel itself (a caller gone, a weight sync's interrupt, a stop
    // string): only a pipe that failed without one is the replica's failure.
    const { readable, writable } = new Identity();
    const consumer = noteCancel(readable);
    upstream.pipeTo(writable).then(
      () => end(false),
      () => end(!consumer.cancelled),
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

/**
 * Notes when `readable`'s reader cancels it: `readable.cancel` and the `cancel` of each reader it
 * hands out are wrapped on the instance (the gateway reads upstream streams through `getReader`).
 * Reads stay native. A consumer that stops it some other way (piping it on, then cancelling
 * there) is not noticed, and its stop counts as a failure.
 */
function noteCancel(readable: ReadableStream<Uint8Array>): { readonly cancelled: boolean } {
  const note = { cancelled: false };
  const cancel = readable.cancel.bind(readable);
  const getReader = readable.getReader.bind(readable) as (options?: unknown) => {
    cancel(reason?: unknown): Promise<void>;
  };
  readable.cancel = (reason?: unknown) => {
    note.cancelled = true;
    return cancel(reason);
  };
  readable.getReader = ((options?: unknown) => {
    const reader = getReader(options);
    const cancelReader = reader.cancel.bind(reader);
    reader.cancel = (reason?: unknown) => {
      note.cancelled = true;
      return cancelReader(reason);
    };
    return reader;
  }) as typeof readable.getReader;
  return note;
}
