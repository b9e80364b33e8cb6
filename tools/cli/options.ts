/** @module Parsing and validating command-line values: numbers in range, the server URL, the token. */
import { InvalidArgumentError } from "commander";
import { UsageError } from "./errors";

/** The server a command talks to when neither --url nor EDGE_ROLLOUT_URL says otherwise. */
export const DEFAULT_URL = "http://127.0.0.1:8787";

/**
 * A commander argument parser for an integer in [min, max]; a bad value is a usage error naming
 * the option, e.g. `--n must be an integer between 1 and 64`.
 *
 * @example
 * command.option("--n <count>", "samples per row", integerIn("--n", 1, 64))
 */
export function integerIn(
  name: string,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): (raw: string) => number {
  return (raw: string) => {
    const value = Number(raw.trim());
    if (raw.trim() === "" || !Number.isSafeInteger(value) || value < min || value > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `between ${min} and ${max}`;
      throw new InvalidArgumentError(`${name} must be an integer ${range} (got "${raw}")`);
    }
    return value;
  };
}

/** A commander argument parser for a finite number (`--threshold 0.5`). */
export function finiteNumber(name: string): (raw: string) => number {
  return (raw: string) => {
    const value = Number(raw.trim());
    if (raw.trim() === "" || !Number.isFinite(value))
      throw new InvalidArgumentError(`${name} must be a number (got "${raw}")`);
    return value;
  };
}

/** A commander argument parser accepting only `choices`. */
export function oneOf<T extends string>(name: string, choices: readonly T[]): (raw: string) => T {
  return (raw: string) => {
    if (!(choices as readonly string[]).includes(raw))
      throw new InvalidArgumentError(`${name} must be one of ${choices.join(", ")} (got "${raw}")`);
    return raw as T;
  };
}

/** A commander argument parser for a JSON object (`--config '{"max_steps": 3}'`). */
export function jsonObject(name: string): (raw: string) => Record<string, unknown> {
  return (raw: string) => {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new InvalidArgumentError(`${name} must be a JSON object (not valid JSON)`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new InvalidArgumentError(`${name} must be a JSON object`);
    return value as Record<string, unknown>;
  };
}

/** The connection every server command takes. */
export interface Connection {
  url: string;
  token: string | undefined;
}

/**
 * Resolves `--url` (else EDGE_ROLLOUT_URL, else http://127.0.0.1:8787) and `--token` (else
 * EDGE_ROLLOUT_TOKEN); a URL that is not http(s) is a usage error.
 */
export function resolveConnection(
  options: { url?: string | undefined; token?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Connection {
  const url = options.url ?? (env.EDGE_ROLLOUT_URL || DEFAULT_URL);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an http(s) URL (got "${url}")`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new UsageError(`--url must be an http(s) URL (got "${url}")`);
  return {
    url: url.replace(/\/+$/, ""),
    token: options.token ?? (env.EDGE_ROLLOUT_TOKEN || undefined),
  };
}

/** Batch ids as the API accepts them (the server's BatchId). */
const BATCH_ID = /^[A-Za-z0-9._:-]{1,160}$/;

/** Validates `--batch-id`; `room` characters are kept free for a chunk suffix. */
export function checkBatchId(id: string, room = 0): string {
  if (!BATCH_ID.test(id) || id.length > 160 - room) {
    throw new UsageError(
      `--batch-id must be 1-${160 - room} characters of A-Z a-z 0-9 . _ : - (got "${id}")`,
    );
  }
  return id;
}

/** A fresh batch id: `cli-<UTC date-time>-<6 hex>`, sortable and unlikely to collide. */
export function newBatchId(now: Date = new Date(), random: () => number = Math.random): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const suffix = Math.floor(random() * 0xffffff)
    .toString(16)
    .padStart(6, "0");
  return `cli-${stamp}-${suffix}`;
}
