/** @module Passing an upstream SSE stream through unchanged while assembling the call's record. */
import type { CapturedOutput } from "./capture/captured-output";
import { SseDataReader } from "./capture/sse-data";
import { StreamAssembler } from "./capture/stream-assembler";

const encoder = new TextEncoder();

/**
 * How a relayed stream ended: `complete` with the assembled record (null when it could not be
 * assembled), or `aborted` (the caller went away, or the upstream failed mid-stream) with what
 * had arrived so far.
 */
export type RelayEnd = { outcome: "complete"; captured: CapturedOutput | null } | { outcome: "aborted"; captured: CapturedOutput };

/**
 * Relays `upstream`'s events to the caller byte for byte, event by event. `finalize` runs exactly
 * once: before the `data: [DONE]` event is forwarded (or at the end of a stream without one), so a
 * caller that saw the end can already read the recorded call; or, when the caller cancels the
 * stream or the upstream breaks off, with the partial output, so the call's admission is
 * released and the call recorded as aborted instead of staying in flight. `keepAlive` receives
 * that late work (the caller is gone, so nothing else keeps the invocation alive for it).
 */
export function relayStream(upstream: Response, finalize: (end: RelayEnd) => Promise<void>, keepAlive?: (work: Promise<unknown>) => void): Response {
  const decoder = new TextDecoder();
  const reader = new SseDataReader();
  const assembler = new StreamAssembler();
  const source = upstream.body!.getReader();
  let pending = "";
  let broken = false;
  let finalized: Promise<void> | undefined;

  const finish = () => {
    finalized ??= (async () => {
      let captured: CapturedOutput | null = null;
      if (!broken) {
        try {
          captured = assembler.finish();
        } catch (error) {
          console.error("stream capture failed", String(error));
        }
      }
      await finalize({ outcome: "complete", captured });
    })();
    return finalized;
  };
  const abort = () => {
    finalized ??= finalize({ outcome: "aborted", captured: assembler.partial() });
    return finalized;
  };

  const relayEvents = async (controller: ReadableStreamDefaultController<Uint8Array>, flushAll: boolean) => {
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

  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await source.read();
      } catch (error) {
        // The upstream broke off mid-stream: release and record what arrived, then fail the caller's stream.
        await abort();
        controller.error(error);
        return;
      }
      if (chunk.done) {
        pending += decoder.decode();
        await relayEvents(controller, true);
        await finish();
        controller.close();
        return;
      }
      pending += decoder.decode(chunk.value, { stream: true });
      await relayEvents(controller, false);
    },
    async cancel(reason) {
      const work = abort();
      keepAlive?.(work);
      await source.cancel(reason).catch(() => undefined);
      await work;
    },
  });
  return new Response(body, { status: upstream.status, headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } });
}
