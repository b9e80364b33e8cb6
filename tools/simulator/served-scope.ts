/** @module A generation request admitted to its replica: the request scope with the latency the replica serves it with. */
import type { RequestScope, SimulatorContext } from "./context";
import { replyAfterLatency } from "./faults";

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
export function serveOnReplica(
  context: SimulatorContext,
  scope: RequestScope,
  promptIds: readonly number[],
  salt: string | null | undefined,
): ServedScope {
  const served = context.replica.begin(scope.config, promptIds, salt);
  return {
    scope: { ...scope, config: { ...scope.config, latency: served.latency } },
    end: (ids) => served.end(ids),
  };
}

/** What `serveGeneration` needs of a prepared chat or completions request. */
export interface ServedGeneration {
  promptIds: readonly number[];
  cacheSalt: string | null | undefined;
  streamed: boolean;
  choices: ReadonlyArray<{ generation: { tokenIds: readonly number[] } }>;
}

/**
 * Serves a prepared generation on its replica: streamed (`stream`) or whole after its latency
 * (`body`), the replica's cache ending with what was generated, and the completion tokens counted
 * only as far as they were generated (a closed connection aborts the rest, as in vLLM). Returns
 * how many positions were generated when the connection closed early, else null.
 */
export async function serveGeneration(
  context: SimulatorContext,
  scope: RequestScope,
  generation: ServedGeneration,
  answer: {
    stream(scope: RequestScope): Promise<number | null>;
    body(scope: RequestScope): unknown;
  },
): Promise<number | null> {
  const longest = Math.max(
    ...generation.choices.map((choice) => choice.generation.tokenIds.length),
  );
  const served = serveOnReplica(context, scope, generation.promptIds, generation.cacheSalt);
  let aborted: number | null = 0;
  try {
    aborted = generation.streamed
      ? await answer.stream(served.scope)
      : await replyAfterLatency(served.scope, context, longest, () => answer.body(served.scope));
  } finally {
    served.end([
      ...generation.promptIds,
      ...generation.choices[0]!.generation.tokenIds.slice(0, aborted ?? longest),
    ]);
  }
  const positions = aborted ?? longest;
  context.stats.completion(
    generation.promptIds.length,
    generation.choices.reduce(
      (sum, choice) => sum + Math.min(positions, choice.generation.tokenIds.length),
      0,
    ),
  );
  return aborted;
}
