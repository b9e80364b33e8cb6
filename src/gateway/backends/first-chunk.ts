/** @module Waits for a response body's first chunk without consuming it. */

/**
 * Waits for the first chunk of `response`'s body and returns an equivalent response whose body
 * still starts with it. Rejects when that read fails (the connection dropped or the attempt's
 * deadline aborted it). Used so an attempt's deadline covers "first byte", not just the headers:
 * a server that sends headers and then hangs is caught before the stream is handed on.
 *
 * The body is teed and one branch read once, then cancelled, so the other carries every byte
 * untouched: in workerd a tee of a fetched body stays native, where re-enqueueing each chunk
 * through a JS stream cost ~75 µs a chunk (117 of 280 ms of workerd CPU per streamed 1,536-token
 * call in a profile of bench:drain's publication: vLLM streams one event a token).
 */
export async function withFirstChunk(response: Response): Promise<Response> {
  const upstream = response.body;
  if (upstream === null) return response;
  const [probe, body] = upstream.tee();
  const reader = probe.getReader();
  try {
    await reader.read();
  } catch (error) {
    await body.cancel(error).catch(() => undefined);
    throw error;
  }
  void reader.cancel().catch(() => undefined);
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
