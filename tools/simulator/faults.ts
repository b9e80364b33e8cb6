/**
 * @module Fault injection: which fault (if any) hits a generation request, and the error
 * bodies for the ones answered before any generation happens.
 */
import type { SimulatorConfig } from "./options";
import type { Rng } from "./rng";
import { SimulatorHttpError } from "./errors";
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
