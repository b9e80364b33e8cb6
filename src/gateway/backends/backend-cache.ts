/**
 * @module A per-isolate cache of built backends, so replica health, in-flight counts and sticky
 * assignments survive from one call (or one queue batch) to the next in the same isolate.
 */
import type { ModelBackend } from "../model-backend";
import type { BackendDeps, BackendRegistry } from "./backend-registry";

/** Backends kept per registry; a policy rarely names more than a couple at once. */
const CACHE_CAPACITY = 16;

const caches = new WeakMap<BackendRegistry, Map<string, ModelBackend>>();

/**
 * Canonical keys by the config's plain JSON. Every model call resolves its backend, and the same
 * config arrives in the same key order call after call: one native JSON.stringify then finds the
 * key, where sorting keys at every depth cost a third of a millisecond per call in the bench's
 * profile. Bounded like the backends (a key order is remembered at most once per config).
 */
const canonicalByRaw = new Map<string, string>();
const RAW_KEY_CAPACITY = 64;

function cacheKey(config: unknown): string {
  const raw = JSON.stringify(config) ?? "null";
  const known = canonicalByRaw.get(raw);
  if (known !== undefined) return known;
  const key = canonicalJson(config);
  if (canonicalByRaw.size >= RAW_KEY_CAPACITY) canonicalByRaw.clear();
  canonicalByRaw.set(raw, key);
  return key;
}

/**
 * JSON with object keys sorted at every depth, so `{a, b}` and `{b, a}` name one backend.
 * `undefined` fields are dropped, as JSON.stringify drops them.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The backend for `config`, built by `registry` on first use and reused while this isolate
 * lives (keyed by the config's canonical JSON; the `deps` of the first call are kept). An
 * invalid config throws InvalidInputError every time and is never cached. At most 16 backends
 * per registry are kept; the least recently used one is dropped (with its replica state).
 *
 * @example
 * const backend = resolveBackend(backendRegistry, policy.backend ?? vllmServerConfig(env.LLM_BASE_URL), defaultBackendDeps);
 */
export function resolveBackend(
  registry: BackendRegistry,
  config: unknown,
  deps: BackendDeps,
): ModelBackend {
  let cache = caches.get(registry);
  if (!cache) {
    cache = new Map();
    caches.set(registry, cache);
  }
  const key = cacheKey(config);
  const cached = cache.get(key);
  if (cached) {
    cache.delete(key);
    cache.set(key, cached);
    return cached;
  }
  const backend = registry.create(config, deps);
  cache.set(key, backend);
  if (cache.size > CACHE_CAPACITY) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  return backend;
}
