/** @module How long one upstream attempt may take before the gateway gives it up and retries. */
import { z } from "zod";
import type { JsonObject } from "../schemas/json";

/**
 * Per-attempt deadlines. A stream's response starts (headers and first chunk) as soon as vLLM
 * has prefilled, so `firstByteMs` bounds it alone. A non-streaming reply arrives only when the
 * whole generation is done, so it gets `firstByteMs` plus `msPerToken` for each token it may
 * generate (`max_tokens`, which the gateway always sets): a floor on the decode speed below
 * which the server counts as hung.
 */
export interface UpstreamTimeouts {
  /** Default 30 s: prefill of a long prompt behind a full batch. */
  firstByteMs: number;
  /** Default 25 ms, i.e. a floor of 40 generated tokens per second for one sequence. */
  msPerToken: number;
}

/** The defaults (see `UpstreamTimeouts`). */
export const DEFAULT_UPSTREAM_TIMEOUTS: UpstreamTimeouts = { firstByteMs: 30_000, msPerToken: 25 };

/** Assumed when a request carries no `max_tokens` (the gateway sets one on every call it shapes). */
const UNBOUNDED_MAX_TOKENS = 4096;

/** The deadline of one attempt of `body` (already shaped: `stream` and `max_tokens` set). */
export function attemptTimeoutMs(timeouts: UpstreamTimeouts, body: JsonObject): number {
  if (body.stream === true) return timeouts.firstByteMs;
  const maxTokens = typeof body.max_tokens === "number" ? body.max_tokens : UNBOUNDED_MAX_TOKENS;
  return timeouts.firstByteMs + timeouts.msPerToken * maxTokens;
}

const Millis = z.coerce.number().int().min(1).max(3_600_000);

/**
 * Reads the deployment's overrides (`UPSTREAM_FIRST_BYTE_TIMEOUT_MS`, `UPSTREAM_MS_PER_TOKEN`,
 * as wrangler vars are strings); an unset or empty one keeps the default. Throws a RangeError
 * naming the variable for anything else that is not a whole number of milliseconds.
 */
export function upstreamTimeoutsFrom(vars: {
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS?: string | undefined;
  UPSTREAM_MS_PER_TOKEN?: string | undefined;
}): UpstreamTimeouts {
  const read = (name: keyof typeof vars, fallback: number): number => {
    const raw = vars[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    const parsed = Millis.safeParse(raw);
    if (!parsed.success)
      throw new RangeError(
        `${name} must be a whole number of milliseconds within 1..3600000, got ${JSON.stringify(raw)}`,
      );
    return parsed.data;
  };
  return {
    firstByteMs: read("UPSTREAM_FIRST_BYTE_TIMEOUT_MS", DEFAULT_UPSTREAM_TIMEOUTS.firstByteMs),
    msPerToken: read("UPSTREAM_MS_PER_TOKEN", DEFAULT_UPSTREAM_TIMEOUTS.msPerToken),
  };
}
