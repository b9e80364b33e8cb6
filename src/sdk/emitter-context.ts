/** @module The attempt an emitter call belongs to, found through AsyncLocalStorage. */
import { AsyncLocalStorage } from "node:async_hooks";
import type { SpanInput } from "../schemas/span";
import { AgentContractError } from "./contract-error";

/** Where an attempt's spans go; the runtime installs one per attempt around the agent's code. */
export interface SpanSink {
  /** Records one (already validated) span of this attempt, in call order. */
  record(span: SpanInput): void;
  /** Tells the attempt's watchdog the agent is alive. */
  heartbeat(): void;
}

// One storage per isolate: every concurrent attempt sees its own sink through its async call tree,
// so emitters need no context argument (workerd provides node:async_hooks under nodejs_compat).
const storage = new AsyncLocalStorage<SpanSink>();

/** Runs `fn` with `sink` as the current attempt's sink, for `fn` and everything it awaits. */
export function runWithSpanSink<T>(sink: SpanSink, fn: () => T): T {
  return storage.run(sink, fn);
}

/** The current attempt's sink; `caller` names the emitter in the error when there is none. */
export function currentSpanSink(caller: string): SpanSink {
  const sink = storage.getStore();
  if (!sink)
    throw new AgentContractError(
      `${caller} was called outside a rollout: emitters work only inside an agent's rollout code (and what it calls)`,
    );
  return sink;
}
