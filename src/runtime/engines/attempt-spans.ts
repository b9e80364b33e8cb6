/** @module One attempt's spans: buffered in call order, tagged with the attempt, flushed to the session in order. */
import { primaryReward, SpanInput } from "../../schemas/span";
import type { SpanSink } from "../../sdk/emitter-context";
import type { SessionHandle } from "../session";

/** Spans are sent to the session once this many are waiting (and at the end of the attempt). */
export const SPAN_FLUSH_AT = 32;

/**
 * The sink emitters write to during one attempt. Flushes run one after another on a promise chain,
 * so the session numbers spans in exactly the order they were emitted. Once closed (the attempt is
 * over, or was given up while its code still runs in the background), new spans are dropped.
 */
export class AttemptSpans implements SpanSink {
  readonly #session: Pick<SessionHandle, "addEvents">;
  readonly #attempt: number;
  readonly #onActivity: () => void;
  #pending: SpanInput[] = [];
  #chain: Promise<void> = Promise.resolve();
  #failure: unknown = null;
  #closed = false;
  #lastReward: number | null = null;

  constructor(session: Pick<SessionHandle, "addEvents">, attempt: number, onActivity: () => void) {
    this.#session = session;
    this.#attempt = attempt;
    this.#onActivity = onActivity;
  }

  /** From the agent's code (emitters). */
  record(span: SpanInput): void {
    if (this.#closed) return;
    this.#onActivity();
    this.append(span);
  }

  heartbeat(): void {
    if (!this.#closed) this.#onActivity();
  }

  /** From the runtime (returned spans, the attempt's exception); like `record`, dropped once closed. */
  append(span: SpanInput): void {
    if (this.#closed) return;
    const parsed = SpanInput.parse(span);
    const tagged = { ...parsed, attributes: { ...parsed.attributes, attempt: this.#attempt } };
    if (tagged.kind === "reward") this.#lastReward = primaryReward(tagged);
    this.#pending.push(tagged);
    if (this.#pending.length >= SPAN_FLUSH_AT) this.#send();
  }

  /** The primary value of the last reward span of this attempt, or null. */
  get lastReward(): number | null {
    return this.#lastReward;
  }

  /** Drops later spans from the agent's code. */
  close(): void {
    this.#closed = true;
  }

  /** Sends what is waiting and waits for every send so far; rethrows a failed send. */
  async flush(): Promise<void> {
    this.#send();
    await this.#chain;
    if (this.#failure) throw this.#failure;
  }

  #send(): void {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    // A refusal (the rollout ended, e.g. cancelled) drops the spans; the driver learns of the end when it finishes.
    this.#chain = this.#chain
      .then(() => this.#session.addEvents(batch))
      .then(
        () => undefined,
        (error: unknown) => void (this.#failure ??= error),
      );
  }
}
