/**
 * @module Fault injection: which fault (if any) hits a generation request, and the error
 * bodies for the ones answered before any generation happens.
 */
import type { SimulatorConfig } from "./options";
import type { Rng } from "./rng";
import type { RequestScope, SimulatorContext } from "./context";
import { SimulatorHttpError } from "./errors";
import { pause, sendJson } from "./http-io";
import type { FaultKind } from "./stats";

/**
 * Draws at most one fault for a request, so the rates add up: a single uniform number is
 * compared against timeout, 5xx, 429 and malformed bands in that order.
 */
export function drawFault(faults: SimulatorConfig["faults"], rng: Rng): FaultKind | undefined {
  const u = rng.next();
  let edge = 0;
  const bands: Array<[FaultKind, number]> = [
    ["timeout", faults.rateTimeout],
    ["5xx", faults.rate5xx],
    ["429", faults.rate429],
    ["malformed", faults.rateMalformed],
  ];
  for (const [kind, rate] of bands) {
    edge += rate;
    if (u < edge) return kind;
  }
  return undefined;
}

/** The body of an injected 500, shaped like vLLM's internal-error response. */
export function injected500(): SimulatorHttpError {
  return new SimulatorHttpError(
    500,
    "InternalServerError",
    "Internal server error (injected by the vLLM simulator)",
  );
}

/** The body of an injected 429, as an overloaded gateway in front of vLLM would send. */
export function injected429(): SimulatorHttpError {
  return new SimulatorHttpError(
    429,
    "RateLimitError",
    "Too many requests (injected by the vLLM simulator)",
  );
}

/** A response body cut in half, so it is no longer valid JSON. */
export function truncateJson(body: unknown): string {
  const text = JSON.stringify(body);
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

/**
 * Answers a non-streaming generation after its modelled latency: the body, or (when the request
 * drew the malformed fault) the body cut in half. Nothing is sent if the client went away; then
 * the answer is the number of positions generated before it left (vLLM aborts a request whose
 * connection closes), else null.
 */
export async function replyAfterLatency(
  scope: RequestScope,
  context: SimulatorContext,
  completionTokens: number,
  body: () => unknown,
): Promise<number | null> {
  const { latency } = scope.config;
  const started = performance.now();
  if (!(await pause(latency.ttftMs + latency.perTokenMs * completionTokens, scope.signal))) {
    const elapsed = performance.now() - started - latency.ttftMs;
    return latency.perTokenMs > 0 && elapsed > 0
      ? Math.min(completionTokens, Math.floor(elapsed / latency.perTokenMs) + 1)
      : 0;
  }
  if (scope.malformed) {
    context.stats.fault("malformed");
    scope.res.writeHead(200, { "content-type": "application/json" });
    scope.res.end(truncateJson(body()));
    return null;
  }
  sendJson(scope.res, 200, body());
  return null;
}
