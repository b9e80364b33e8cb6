/**
 * @module Server-sent events for the translated APIs: each answer is one whole reply the stream
 * is generated from, so while it is pending the stream sends SSE comment lines, which every SSE
 * parser skips (WHATWG HTML, "event stream interpretation": a line starting with ":"), to keep a
 * harness's idle-read timers and any proxy in between from closing the connection.
 */

const encoder = new TextEncoder();

/** One event: `event: <name>` (omitted when null) and one `data:` line of JSON or text. */
export function sseEvent(name: string | null, data: unknown): Uint8Array {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return encoder.encode(`${name === null ? "" : `event: ${name}\n`}data: ${payload}\n\n`);
}

/**
 * A stream that sends `opening` at once, a keepalive comment every `keepaliveMs` while `reply` is
 * pending, then what `closing` makes of the reply (or of its error), and closes.
 */
export function pendingReplyStream<T>(
  reply: Promise<T>,
  keepaliveMs: number,
  opening: Uint8Array[],
  closing: (outcome: { ok: true; value: T } | { ok: false; error: unknown }) => Uint8Array[],
): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setInterval> | undefined;
  // A caller that left cancels the stream: nothing may be enqueued after that.
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of opening) controller.enqueue(chunk);
      timer = setInterval(() => {
        if (!cancelled) controller.enqueue(encoder.encode(": keepalive\n\n"));
      }, keepaliveMs);
      reply
        .then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        )
        .then((outcome) => {
          clearInterval(timer);
          if (cancelled) return;
          for (const chunk of closing(outcome)) controller.enqueue(chunk);
          controller.close();
        });
    },
    cancel() {
      cancelled = true;
      clearInterval(timer);
    },
  });
}
