/** @module Passing an upstream SSE stream through unchanged while assembling the call's record. */
import type { CapturedOutput } from "./capture/captured-output";
import { SseDataReader } from "./capture/sse-data";
import { StreamAssembler } from "./capture/stream-assembler";

const encoder = new TextEncoder();

/**
 * Relays `upstream`'s events to the caller byte for byte, event by event. The assembled record
 * is handed to `finalize` before the `data: [DONE]` event is forwarded (or at the end of a stream
 * without one), so a caller that saw the end can already read the recorded call. A stream that
 * cannot be assembled is still relayed; `finalize` then gets null.
 */
export function relayStream(upstream: Response, finalize: (captured: CapturedOutput | null) => Promise<void>): Response {
  const decoder = new TextDecoder();
  const reader = new SseDataReader();
  const assembler = new StreamAssembler();
  let pending = "";
  let broken = false;
  let finalized = false;

  const finish = async () => {
    if (finalized) return;
    finalized = true;
    let captured: CapturedOutput | null = null;
    if (!broken) {
      try {
        captured = assembler.finish();
      } catch (error) {
        console.error("stream capture failed", String(error));
      }
    }
    await finalize(captured);
  };

  const relayEvents = async (controller: TransformStreamDefaultController<Uint8Array>, flushAll: boolean) => {
    let boundary: number;
    while ((boundary = pending.indexOf("\n\n")) >= 0 || (flushAll && pending.length > 0)) {
      const end = boundary >= 0 ? boundary + 2 : pending.length;
      const event = pending.slice(0, end);
      pending = pending.slice(end);
      try {
        for (const payload of reader.push(boundary >= 0 ? event : `${event}\n\n`)) {
          if (payload.trim() === "[DONE]") await finish();
          else assembler.push(payload);
        }
      } catch (error) {
        broken = true;
        console.error("stream capture failed", String(error));
      }
      controller.enqueue(encoder.encode(event));
    }
  };

  const body = upstream.body!.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        await relayEvents(controller, false);
      },
      async flush(controller) {
        pending += decoder.decode();
        await relayEvents(controller, true);
        await finish();
      },
    }),
  );
  return new Response(body, { status: upstream.status, headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } });
}
