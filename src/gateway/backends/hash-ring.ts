/**
 * @module A consistent-hash ring with virtual nodes, the ring `prefix_hash` places calls on: each
 * replica owns `VIRTUAL_NODES` points, a key belongs to the first point clockwise of its hash, so
 * a replica that joins or leaves moves only the keys of the arcs it takes or gives up (about
 * 1/N of them), and a prefix stays on the replica whose cache holds it.
 */
import { fnv1a32, mix32 } from "../../fnv1a";

/**
 * Points per replica. With 4 replicas and 160 points each (ketama's figure) a replica's share of
 * the ring stays within about ±10% of 1/N; fewer points leave arcs uneven enough that one replica
 * gets a third more prefixes than another.
 */
export const VIRTUAL_NODES = 160;

/** A ring over a fixed list of replicas (anything with a `url`). */
export class HashRing<R extends { readonly url: string }> {
  readonly #points: Array<{ hash: number; replica: R }>;
  readonly #distinct: number;

  /** `replicas` must be non-empty; each gets `virtualNodes` points hashed from its URL. */
  constructor(replicas: readonly R[], virtualNodes = VIRTUAL_NODES) {
    this.#points = replicas
      .flatMap((replica) =>
        Array.from({ length: virtualNodes }, (_, i) => ({
          hash: mix32(fnv1a32(`${replica.url}#${i}`)),
          replica,
        })),
      )
      // Ties need a 32-bit collision; URL order keeps the ring the same in every isolate.
      .sort((a, b) => a.hash - b.hash || (a.replica.url < b.replica.url ? -1 : 1));
    this.#distinct = new Set(replicas.map((replica) => replica.url)).size;
  }

  /**
   * The replicas in ring order from `key`'s point clockwise, each once: the first owns the key;
   * the next is where the key goes if the first is down (as if it had left the ring).
   */
  order(key: string): R[] {
    const points = this.#points;
    const at = firstAtOrAfter(points, mix32(fnv1a32(key)));
    const seen = new Set<string>();
    const out: R[] = [];
    for (let i = 0; i < points.length && out.length < this.#distinct; i++) {
      const { replica } = points[(at + i) % points.length]!;
      if (seen.has(replica.url)) continue;
      seen.add(replica.url);
      out.push(replica);
    }
    return out;
  }
}

/** Index of the first point whose hash is ≥ `hash` (binary search), wrapping to 0 past the end. */
function firstAtOrAfter(points: ReadonlyArray<{ hash: number }>, hash: number): number {
  let low = 0;
  let high = points.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (points[mid]!.hash < hash) low = mid + 1;
    else high = mid;
  }
  return low % points.length;
}
