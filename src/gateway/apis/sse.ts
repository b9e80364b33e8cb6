/**
 * @module Server-sent events for the translated APIs: each answer is one whole reply the stream
 * is generated from, so while it is pending the stream sends SSE comment lines, which every SSE
 * parser skips (WHATWG HTML, "event stream interpretation": a line starting with ":"), to keep a
 * harness's idle-read timers (Codex's `stream_idle_timeout_ms`) and any proxy in between from
 * closing the connection. The one implementation of that wait for every API's stream.
 */

const encoder = new TextEncoder();

/** The keepalive comment line. */
export const KEEPALIVE = ": keepalive\n\n";

/** One event: `event: <name>` (omitted when null) and one `data:` line of JSON or text. */
export function sseEvent(name: string | null, data: unknown): Uint8Array {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return encoder.encode(`${name === null ? "" : `event: ${name}\n`}data: ${payload}\n\n`);
}

/** How a pending reply ended. */
export type ReplyOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * A stream that sends `opening` at once, a keepalive comment every `keepaliveMs` while `reply` is
 * pending, then what `closing` makes of the reply, and closes. When `closing` throws on a reply
 * (one that is not what it expects) it is asked again with that error, so the API's error event
 * goes out instead. Cancelling the stream (the caller left) stops the keepalives and sends nothing
 * more; the reply is still awaited, so its rejection is never unhandled.
 */
export function pendingReplyStream<T>(
  reply: Promise<T>,
  keepaliveMs: number,
  opening: Uint8Array[],
  closing: (outcome: ReplyOutcome<T>) => Uint8Array[],
): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setInterval> | undefined;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of opening) controller.enqueue(chunk);
      timer = setInterval(() => {
        if (!cancelled) controller.enqueue(encoder.encode(KEEPALIVE));
      }, keepaliveMs);
      // Never rejects: both outcomes are handled here, so nothing waits on this chain.
      void reply
        .then(
          (value): ReplyOutcome<T> => ({ ok: true, value }),
          (error: unknown): ReplyOutcome<T> => ({ ok: false, error }),
        )
        .then((outcome) => {
          clearInterval(timer);
          if (cancelled) return;
          let chunks: Uint8Array[];
          try {
            chunks = closing(outcome);
          } catch (error) {
            chunks = closing({ ok: false, error });
          }
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
        });
    },
    cancel() {
      cancelled = true;
      clearInterval(timer);
    },
  });
}
