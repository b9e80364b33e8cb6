/**
 * @module The caller's side of a stream the gateway pumps itself (stream-relay.ts,
 * resumable-stream.ts): the response body the caller reads, and whether the caller is gone. A
 * caller leaves by cancelling its body (the writable side errors, so writes reject) or, when this
 * stream's consumer is another relay that cannot cancel it, by `callerGone` aborting. Once it is
 * gone nothing more is written; the pump reads the upstream on regardless, so the call is still
 * recorded (as one nobody received) and released.
 */

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};

/** Writes to a caller that may leave at any time; every method is a no-op once it has. */
export interface CallerStream {
  /** True once the caller left (or the stream was failed): writes are dropped from then on. */
  readonly gone: boolean;
  /** Queues `bytes` for the caller; not awaited, so the pump never waits for a slow reader. */
  write(bytes: Uint8Array): void;
  /** Ends the caller's stream after what is queued (not awaited: closing waits for the reader). */
  close(): void;
  /** Fails the caller's stream with `error`; never rejects. */
  fail(error: unknown): Promise<void>;
  /** The SSE response whose body is this stream. */
  response(status: number): Response;
}

/** A caller stream that also ends when `callerGone` aborts (its consumer is a relay of a relay). */
export function openCallerStream(callerGone?: AbortSignal): CallerStream {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  let gone = false;
  void writer.closed.catch(() => (gone = true));
  callerGone?.addEventListener(
    "abort",
    () => {
      gone = true;
      void writer.abort(new Error("the caller left")).catch(() => undefined);
    },
    { once: true },
  );
  return {
    get gone() {
      return gone;
    },
    write(bytes) {
      if (!gone) writer.write(bytes).catch(() => (gone = true));
    },
    close() {
      if (!gone) void writer.close().catch(() => undefined);
    },
    async fail(error) {
      if (!gone) await writer.abort(error).catch(() => undefined);
    },
    response(status) {
      return new Response(readable, { status, headers: SSE_HEADERS });
    },
  };
}
