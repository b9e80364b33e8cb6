/**
 * @module vLLM's `cache_salt` per policy version. KV computed by old weights is wrong for new
 * ones, yet vLLM's prefix cache matches blocks by token ids alone: a replica that took a weight
 * update in place (verl's sync) would serve a new-version call from old-version KV. A salt per
 * version separates them: vLLM mixes it into the first block's hash, so no block is shared
 * across versions (docs.vllm.ai/en/latest/design/prefix_caching, "cache isolation").
 */
import type { JsonObject } from "../schemas/json";

/** The salt of `policyVersion`, joined to the caller's own salt when it sent one. */
export function cacheSaltFor(policyVersion: number, callerSalt?: unknown): string {
  const own = `policy-v${policyVersion}`;
  return typeof callerSalt === "string" && callerSalt !== "" ? `${own}:${callerSalt}` : own;
}

/**
 * `body` with the salt of `policyVersion`. Version 0 (no weight sync yet) leaves the body as the
 * caller sent it, so a deployment that never syncs sends exactly what it did before. `callerSalt`
 * null: the body's own salt is the gateway's (a leg resumed under a new version) and is replaced.
 */
export function withCacheSalt(
  body: JsonObject,
  policyVersion: number,
  callerSalt: unknown = body.cache_salt,
): JsonObject {
  if (policyVersion <= 0) return body;
  return { ...body, cache_salt: cacheSaltFor(policyVersion, callerSalt) };
}
