/**
 * @module A fixed-length stream of byte ranges of R2 objects: a head, each range piped from R2 as it
 * arrives (workerd pumps one native stream into the other; the bytes never pass through
 * JavaScript), then a tail. A streamed Arrow pull answers with it, and a feed shard writes a
 * compacted pack from it. A few reads are in flight ahead of the one being piped, within the 6
 * simultaneous connections an invocation has.
 */

/** One range read: `length` bytes at `offset` of the object at `key`. */
export interface RangeRead {
  key: string;
  offset: number;
  length: number;
}

/** Range reads started ahead of the one being piped (plus that one: 5 of the 6 connections). */
const READ_AHEAD = 4;

/**
 * A fixed-length body of `head`, the bytes of `reads` in order, and `tail`. A range that is missing
 * or short aborts the body, never a silently wrong stream: a pull's client sees a truncated answer
 * (the lease lapses and its groups are delivered again); a compaction's R2 put fails (nothing moves).
 */
export function streamSpans(
  bucket: R2Bucket,
  head: Uint8Array[],
  reads: RangeRead[],
  tail: Uint8Array,
): { body: ReadableStream<Uint8Array>; length: number } {
  const length =
    head.reduce((n, c) => n + c.length, 0) + reads.reduce((n, r) => n + r.length, 0) + tail.length;
  const { readable, writable } = new FixedLengthStream(length);
  const started: Array<Promise<R2ObjectBody | null>> = [];
  const start = (i: number): void => {
    for (let k = started.length; k < Math.min(reads.length, i + READ_AHEAD + 1); k++) {
      const read = reads[k]!;
      started.push(bucket.get(read.key, { range: { offset: read.offset, length: read.length } }));
    }
  };
  void (async () => {
    let writer = writable.getWriter();
    try {
      for (const chunk of head) await writer.write(chunk);
      for (const [i, read] of reads.entries()) {
        start(i);
        const object = await started[i]!;
        if (!object) throw new Error(`pack object ${read.key} is missing`);
        writer.releaseLock();
        await object.body.pipeTo(writable, { preventClose: true });
        writer = writable.getWriter();
      }
      await writer.write(tail);
      await writer.close();
    } catch (error) {
      await writer.abort(error).catch(() => undefined);
      // Reads started ahead are let go.
      for (const pending of started)
        void pending.then((object) => object?.body.cancel()).catch(() => undefined);
    }
  })();
  return { body: readable, length };
}
