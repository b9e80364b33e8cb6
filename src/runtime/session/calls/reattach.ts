/**
 * @module Where the caller of a call that its session's restart cut finds it again. The restart
 * broke the caller's connection, so the caller (an SDK's retry, an agent's own) asks again; the
 * call meanwhile goes on in the restarted object (call-resume.ts). The new request attaches to it
 * by the call id the client sent (`x-edge-rollout-call-id`), or, from a client that sends none (a
 * stock OpenAI SDK), by being byte-for-byte the same request, and reads the whole answer from its
 * first byte: one response, however often the object restarted.
 */
import type { GatewayCallResult } from "./gateway-call";

/** How long a resumed call's answer waits for its caller after the call ended (the SDKs retry within seconds). */
export const HELD_AFTER_END_MS = 2 * 60_000;

interface Held {
  /** The request's path and body as text: a retry without a call id must be this exact request. */
  key: string;
  claimed: boolean;
  endedAt: number | null;
  /** The answer as the resumed call gave it (a stream's body is read here, into `bytes`). */
  answer: Promise<GatewayCallResult>;
  /** A streamed answer: every byte so far, and the readers following it. */
  bytes: Uint8Array[];
  followers: Set<ReadableStreamDefaultController<Uint8Array>>;
  done: boolean;
  failed: unknown;
}

/** The answers of resumed calls, held for the caller that comes back for them. */
export class ReattachableCalls {
  readonly #held = new Map<string, Held>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Holds the answer of resumed call `callId` (its request `key`), read to its end whether or not anyone attaches. */
  hold(callId: string, key: string, answer: Promise<GatewayCallResult>): Promise<void> {
    const held: Held = {
      key,
      claimed: false,
      endedAt: null,
      answer,
      bytes: [],
      followers: new Set(),
      done: false,
      failed: undefined,
    };
    this.#held.set(callId, held);
    const end = (): void => {
      held.done = true;
      held.endedAt = this.#now();
      for (const follower of held.followers) {
        if (held.failed === undefined) follower.close();
        else follower.error(held.failed);
      }
      held.followers.clear();
    };
    return answer.then(
      async (result) => {
        if (!("stream" in result)) return end();
        const reader = result.stream.getReader();
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            held.bytes.push(value);
            for (const follower of held.followers) follower.enqueue(value);
          }
        } catch (error) {
          held.failed = error;
        }
        end();
      },
      () => end(),
    );
  }

  /** Whether any answer is held (most object lives hold none: a caller's request then skips the claim). */
  get holding(): boolean {
    return this.#held.size > 0;
  }

  /**
   * The answer for a request that may be a cut call's caller coming back: by `callId` when the
   * client sent one, else the unclaimed resumed call whose request is exactly `key`. Undefined
   * when it is none of them (a new call). Each held answer is given out once; a stream is replayed
   * from its first byte and then followed live.
   */
  claim(callId: string | null, key: string): Promise<GatewayCallResult> | undefined {
    this.#expire();
    let held: Held | undefined;
    if (callId !== null) held = this.#held.get(callId);
    else for (const [, entry] of this.#held) if (!entry.claimed && entry.key === key) held = entry;
    if (!held || held.claimed) return undefined;
    held.claimed = true;
    const found = held;
    return found.answer.then((result) => {
      if (!("stream" in result)) return result;
      const stream = new ReadableStream<Uint8Array>({
        start: (controller) => {
          for (const bytes of found.bytes) controller.enqueue(bytes);
          if (!found.done) found.followers.add(controller);
          else if (found.failed !== undefined) controller.error(found.failed);
          else controller.close();
        },
        cancel: () => void found.followers.clear(),
      });
      return { ok: true as const, stream };
    });
  }

  /** Drops the answers whose caller never came back, and those given out and ended. */
  #expire(): void {
    const now = this.#now();
    for (const [callId, held] of this.#held)
      if (
        held.claimed ? held.done : held.endedAt !== null && now - held.endedAt > HELD_AFTER_END_MS
      )
        this.#held.delete(callId);
  }
}
