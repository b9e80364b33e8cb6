/** @module A generation request admitted to its replica: the request scope with the latency the replica serves it with. */
import type { RequestScope, SimulatorContext } from "./context";

/** The scope to answer in (its config's latency replaced by the replica's) and how to end the request. */
export interface ServedScope {
  scope: RequestScope;
  /** Ends the request once: `ids` are the prompt and the tokens generated, cached for the next turn. */
  end(ids: readonly number[]): void;
}

/**
 * Admits a request to `context.replica` (prefix lookup, prefill queue, running count) and returns
 * the scope whose latency reflects them. The handlers pace their answer with it unchanged.
 */
export function serveOnReplica(context: SimulatorContext, scope: RequestScope, promptIds: readonly number[], salt: string | null | undefined): ServedScope {
  const served = context.replica.begin(scope.config, promptIds, salt);
  return { scope: { ...scope, config: { ...scope.config, latency: served.latency } }, end: (ids) => served.end(ids) };
}
