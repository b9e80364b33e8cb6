/** @module Incremental parsing of `data:` payloads from a Server-Sent Events byte stream. */

/**
 * Splits SSE text into events and returns each event's joined `data:` lines. Feed it decoded text
 * in any chunking; `[DONE]` and comment lines are returned and skipped by the caller as needed.
 */
export class SseDataReader {
  #buffer = "";

  /** Adds text and returns the data payloads of every event completed by it. */
  push(text: string): string[] {
    this.#buffer += text.replace(/\r\n?/g, "\n");
    const payloads: string[] = [];
    let boundary: number;
    while ((boundary = this.#buffer.indexOf("\n\n")) >= 0) {
      const event = this.#buffer.slice(0, boundary);
      this.#buffer = this.#buffer.slice(boundary + 2);
      const data = event
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""));
      if (data.length > 0) payloads.push(data.join("\n"));
    }
    return payloads;
  }

  /** Whatever is left unterminated at the end of the stream (a well-formed stream leaves nothing). */
  rest(): string {
    return this.#buffer.trim();
  }
}
