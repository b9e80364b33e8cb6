/**
 * @module Passing an upstream SSE stream through unchanged while assembling the call's record.
 * The upstream is read by its own pump, not by the caller's pulls: a caller that stalls or leaves
 * can no longer stall the capture, keep the call's admission counted, or lose the record.
 */
import { openCallerStream } from "./caller-stream";
import type { CapturedOutput } from "./capture/captured-output";
import { SseDataReader } from "./capture/sse-data";
import { StreamAssembler } from "./capture/stream-assembler";

const encoder = new TextEncoder();

/**
 * How a relayed stream ended: `complete` with the assembled record (null when it could not be
 * assembled), or `aborted` (the caller went away, the upstream failed mid-stream, or the call's
 * own deadline passed) with what had arrived: all of it when the upstream still ended normally
 * after the caller left (its output is whole but nobody saw it, so it cannot train).
 */
export type RelayEnd =
  | { outcome: "complete"; captured: CapturedOutput | null }
  | { outcome: "aborted"; captured: CapturedOutput; callerGone: boolean };

/** Options of `relayStream`. */
export interface RelayOptions {
  /** Keeps the pump alive after the response is handed back (e.g. `ExecutionContext.waitUntil`). */
  keepAlive?: (work: Promise<unknown>) => void;
  /** The call's own deadline in ms from now: past it the upstream is cancelled and the call ends aborted. */
  deadlineMs?: number;
  /** Aborts when the caller left in a way this stream cannot see (its consumer is a relay of a relay). */
  callerGone?: AbortSignal;
}

/**
 * Relays `upstream`'s events to the caller byte for byte, event by event. A pump reads the
 * upstream to its end (or to `deadlineMs`) whatever the caller does; what the caller has not read
 * yet waits in the response's queue (one call's reply: a few MB at most). `finalize` runs exactly
 * once: before the `data: [DONE]` event is forwarded (or at the end of a stream without one), so a
 * caller that saw the end can already read the recorded call; or, when the upstream breaks off or
 * the deadline passes, with the partial output. A caller that leaves does not end the read: the
 * call ends when the upstream does, recorded as aborted with everything that arrived.
 */
export function relayStream(
  upstream: Response,
  finalize: (end: RelayEnd) => Promise<void>,
  options: RelayOptions = {},
): Response {
  const decoder = new TextDecoder();
  const reader = new SseDataReader();
  const assembler = new StreamAssembler();
  const source = upstream.body!.getReader();
  const caller = openCallerStream(options.callerGone);
  let broken = false;
  let finalized: Promise<void> | undefined;
  const whole = (): CapturedOutput | null => {
    if (broken) return null;
    try {
      return assembler.finish();
    } catch (error) {
      console.error("stream capture failed", String(error));
      return null;
    }
  };
  const finish = (): Promise<void> => {
    finalized ??= (async () => {
      if (!caller.gone) return finalize({ outcome: "complete", captured: whole() });
      // The caller left: the output is whole (when it assembles) but nobody received it.
      return finalize({
        outcome: "aborted",
        captured: whole() ?? assembler.partial(),
        callerGone: true,
      });
    })();
    return finalized;
  };
  const abort = (): Promise<void> =>
    (finalized ??= finalize({
      outcome: "aborted",
      captured: assembler.partial(),
      callerGone: caller.gone,
    }));

  const relayEvents = async (pending: string, flushAll: boolean): Promise<string> => {
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
      caller.write(encoder.encode(event));
    }
    return pending;
  };

  let timedOut = false;
  const timer =
    options.deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          void source.cancel("the call's deadline passed").catch(() => undefined);
        }, options.deadlineMs);

  const pump = (async () => {
    let pending = "";
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await source.read();
        } catch (error) {
          // The upstream broke off mid-stream: record what arrived, then fail the caller's stream.
          await abort();
          await caller.fail(error);
          return;
        }
        if (chunk.done) {
          if (timedOut) {
            await abort();
            await caller.fail(new Error("the call's deadline passed"));
            return;
          }
          pending = await relayEvents(pending + decoder.decode(), true);
          await finish();
          // Not awaited: closing waits for the caller to read what is queued, and the pump does not wait for the caller.
          caller.close();
          return;
        }
        pending = await relayEvents(pending + decoder.decode(chunk.value, { stream: true }), false);
      }
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  })();
  options.keepAlive?.(pump);
  return caller.response(upstream.status);
}
