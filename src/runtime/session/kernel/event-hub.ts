/** @module Server-Sent Events fan-out from one rollout session to its subscribers. */

const encoder = new TextEncoder();

/** One SSE frame. `id` lets a client resume with Last-Event-ID. */
export interface SseEvent {
  id?: string;
  event: string;
  data: unknown;
}

/** Renders one event in the `text/event-stream` wire format. */
export function formatSse(event: SseEvent): string {
  const id = event.id === undefined ? "" : `id: ${event.id}\n`;
  return `${id}event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/**
 * Holds open event streams and pushes each event to all of them. Streams live in the session's
 * memory: if the object is evicted they end, and a client reconnects with Last-Event-ID to get
 * what it missed from storage.
 */
export class EventHub {
  #subscribers = new Set<ReadableStreamDefaultController<Uint8Array>>();

  /** Opens a stream that first replays `backlog`, then carries every later `publish`. */
  subscribe(backlog: SseEvent[], closeAfterBacklog: boolean): ReadableStream<Uint8Array> {
    let own: ReadableStreamDefaultController<Uint8Array> | undefined;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        own = controller;
        controller.enqueue(encoder.encode(": connected\n\n"));
        for (const event of backlog) controller.enqueue(encoder.encode(formatSse(event)));
        if (closeAfterBacklog) controller.close();
        else this.#subscribers.add(controller);
      },
      cancel: () => {
        if (own) this.#subscribers.delete(own);
      },
    });
  }

  /** Sends `event` to every open stream; `last` closes them afterwards. */
  publish(event: SseEvent, last = false): void {
    if (this.#subscribers.size === 0) return; // nobody listening (the usual case): not even rendered
    const bytes = encoder.encode(formatSse(event));
    for (const controller of this.#subscribers) {
      try {
        controller.enqueue(bytes);
        if (last) controller.close();
      } catch {
        // The reader went away; forget it.
        this.#subscribers.delete(controller);
      }
    }
    if (last) this.#subscribers.clear();
  }

  /** Open streams (for tests and stats). */
  get size(): number {
    return this.#subscribers.size;
  }
}
