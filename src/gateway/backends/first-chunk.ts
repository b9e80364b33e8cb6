/** @module Waits for a response body's first chunk without consuming it. */

/**
 * Reads the first chunk of `response`'s body and returns an equivalent response whose body still
 * starts with it. Rejects when that read fails (the connection dropped or the attempt's deadline
 * aborted it). Used so an attempt's deadline covers "first byte", not just the headers: a server
 * that sends headers and then hangs is caught before the stream is handed on.
 */
export async function withFirstChunk(response: Response): Promise<Response> {
  const upstream = response.body;
  if (upstream === null) return response;
  const reader = upstream.getReader();
  const first = await reader.read();
  let pending: Uint8Array | undefined = first.done ? undefined : first.value;
  let finished = first.done;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending !== undefined) {
        controller.enqueue(pending);
        pending = undefined;
        return;
      }
      if (finished) return controller.close();
      const next = await reader.read();
      if (next.done) {
        finished = true;
        controller.close();
      } else {
        controller.enqueue(next.value);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
