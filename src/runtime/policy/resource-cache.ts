/**
 * @module The resource versions an admission shard has read from the policy object, kept in
 * memory: a version never changes (`name@version` always means the same value), so each is read
 * once per shard instance however many rollouts and claims ask for it.
 */
import type { GetResourceResult, ResourceRecord } from "./policy-results";

/** Reads one exact version from the policy object. */
export type FetchResourceVersion = (name: string, version: number) => Promise<GetResourceResult>;

/**
 * Bytes of values kept at most: a version may be ~1.9 MB (MAX_RESOURCE_BYTES) and an isolate has
 * 128 MB shared by every object in it, so a shard keeps a few large values, not every version.
 */
export const RESOURCE_CACHE_BYTES = 8 * 1024 * 1024;

/** Least recently used versions go first once their values pass `maxBytes`. */
export class ResourceVersionCache {
  readonly #fetch: FetchResourceVersion;
  readonly #maxBytes: number;
  /** Kept versions in use order (a Map iterates in insertion order: a hit is re-inserted). */
  readonly #kept = new Map<string, { record: ResourceRecord; bytes: number }>();
  /** Reads under way, shared by every request for the same version. */
  readonly #reading = new Map<string, Promise<GetResourceResult>>();
  #bytes = 0;

  constructor(fetch: FetchResourceVersion, maxBytes = RESOURCE_CACHE_BYTES) {
    this.#fetch = fetch;
    this.#maxBytes = maxBytes;
  }

  /** Version `version` of `name`, read from the policy object only when not kept. */
  async get(name: string, version: number): Promise<GetResourceResult> {
    const key = `${name}@${version}`;
    const kept = this.#kept.get(key);
    if (kept) {
      this.#kept.delete(key);
      this.#kept.set(key, kept);
      return { ok: true, ...kept.record };
    }
    let reading = this.#reading.get(key);
    if (!reading) {
      reading = this.#fetch(name, version).finally(() => this.#reading.delete(key));
      this.#reading.set(key, reading);
      void reading.then((found) => found.ok && this.#keep(key, found)).catch(() => undefined);
    }
    return reading;
  }

  #keep(key: string, found: ResourceRecord): void {
    if (this.#kept.has(key)) return;
    const { name, version, id, value, created_at } = found;
    // The JSON text's length stands for the value's size (a copy is what the isolate holds).
    const bytes = JSON.stringify(value).length;
    if (bytes > this.#maxBytes) return;
    this.#kept.set(key, { record: { name, version, id, value, created_at }, bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#kept) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#kept.delete(oldest);
      this.#bytes -= entry.bytes;
    }
  }
}
