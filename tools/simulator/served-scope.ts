/**
 * @module A generation request served by its replica's engine: after the frontend's delay
 * (`latency.ttftMs`), each choice becomes one sequence in the step loop; a streamed answer sends
 * each token as its step produces it, a whole answer waits for every choice to end. A client that
 * leaves aborts its sequences (vLLM aborts a request whose connection closes), and only the
 * tokens generated are counted.
 */
import type { RequestScope, SimulatorContext } from "./context";
import type { EngineRequest, EngineRequestSpec } from "./engine/engine-loop";
import type { TokenEvent } from "./engine/sequence";
import { SimulatorHttpError } from "./errors";
import { truncateJson } from "./faults";
import { type SseWriter, pause, sendError, sendJson } from "./http-io";

/** How a streamed answer is written. */
export interface StreamAnswer {
  /** Sends token `event` of choice `index`; false when the stream cannot go on (client gone, a malformed fault sent). */
  token(index: number, event: TokenEvent): boolean;
  /** Sends the closing events once every choice ended. */
  end(): void;
  /** Ends the response early: an error event first when the engine failed. */
  abort(error?: Error): void;
}

/** A prepared chat or completions request, as the engine serves it. */
export interface ServedGeneration {
  promptIds: readonly number[];
  streamed: boolean;
  /** One engine sequence per choice, in choice order. */
  choices: ReadonlyArray<Omit<EngineRequestSpec, "onToken">>;
}

/** How the request ended: its sequences, and whether the client left before the end. */
export interface ServedResult {
  requests: EngineRequest[];
  clientGone: boolean;
}

/**
 * Serves a prepared generation on `context.replica`: streamed through `answer.stream`, or whole
 * through `answer.body` once every sequence ended. An engine failure (a token source that failed)
 * answers vLLM's 500, or an error event mid-stream.
 */
export async function serveGeneration(
  context: SimulatorContext,
  scope: RequestScope,
  generation: ServedGeneration,
  answer: {
    stream(requests: readonly EngineRequest[]): StreamAnswer;
    body(requests: readonly EngineRequest[]): unknown;
  },
): Promise<ServedResult> {
  const requests: EngineRequest[] = [];
  if (!(await pause(scope.config.latency.ttftMs, scope.signal)))
    return { requests, clientGone: true };
  let writer: StreamAnswer | null = null;
  const abortAll = () => {
    for (const request of requests) request.abort();
  };
  // Relays a choice's tokens to the stream; a stream that cannot go on aborts every choice.
  const relayTo = (index: number) => (event: TokenEvent) => {
    if (!writer!.token(index, event)) abortAll();
  };
  generation.choices.forEach((spec, index) => {
    requests.push(
      context.replica.add(generation.streamed ? { ...spec, onToken: relayTo(index) } : spec),
    );
  });
  if (generation.streamed) writer = answer.stream(requests);
  scope.signal.addEventListener("abort", abortAll, { once: true });
  try {
    await Promise.all(requests.map((request) => request.done));
  } finally {
    scope.signal.removeEventListener("abort", abortAll);
  }
  const clientGone = scope.signal.aborted || scope.res.destroyed;
  const error = requests.find((request) => request.error)?.error ?? null;
  const generated = requests.reduce((sum, request) => sum + request.output.ids.length, 0);
  context.stats.completion(generation.promptIds.length, generated);
  if (writer) {
    if (error) writer.abort(error);
    else if (clientGone || requests.some((r) => r.output.finishReason === "abort")) writer.abort();
    else writer.end();
  } else if (!clientGone) {
    if (error) sendError(scope.res, engineError(error));
    else if (scope.malformed) {
      context.stats.fault("malformed");
      scope.res.writeHead(200, { "content-type": "application/json" });
      scope.res.end(truncateJson(answer.body(requests)));
    } else sendJson(scope.res, 200, answer.body(requests));
  }
  return { requests, clientGone };
}

/** What a request's choices share as engine sequences; each choice adds its script. */
export interface SequenceBase {
  promptIds: readonly number[];
  salt: string | null | undefined;
  params: EngineRequestSpec["params"];
  tokenizer: EngineRequestSpec["tokenizer"];
  /** Where a continued turn's positions start (0 for a new turn). */
  positionOffset: number;
}

/** One engine sequence per choice: the request's context and limits, each choice's scripted body and log-prob seed. */
export function sequenceSpecs(
  scope: RequestScope,
  base: SequenceBase,
  choices: ReadonlyArray<{
    bodyIds: readonly number[];
    seed: number;
    turnBodyIds?: readonly number[];
  }>,
): Array<Omit<EngineRequestSpec, "onToken">> {
  return choices.map((choice) => ({
    promptIds: base.promptIds,
    salt: base.salt ?? null,
    params: base.params,
    contextLeft: scope.config.maxModelLen - base.promptIds.length,
    key: scope.sampleKey,
    script: {
      bodyIds: choice.bodyIds,
      logprobSeed: choice.seed,
      positionOffset: base.positionOffset,
      ...(choice.turnBodyIds ? { turnBodyIds: choice.turnBodyIds } : {}),
    },
    tokenizer: base.tokenizer,
  }));
}

/** Ends a stream early: after vLLM's error event and `[DONE]` when the engine failed, else cut (the client left). */
export function endStreamEarly(sse: SseWriter, error?: Error): void {
  if (!error) return sse.abort();
  sse.send(engineError(error).toBody());
  sse.done();
}

/** vLLM's answer when its engine failed a request. */
export function engineError(error: Error): SimulatorHttpError {
  return new SimulatorHttpError(500, "InternalServerError", `EngineCore failed: ${error.message}`);
}
