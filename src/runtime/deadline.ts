/**
 * @module A bound on how long a caller waits for work it cannot cancel (a Durable Object RPC, an R2
 * call): past `ms` the caller stops waiting and says so; the work itself runs on. A queue consumer
 * uses it so one call that never answers cannot hold its whole batch, and with it the queue.
 */

/** Thrown when a bounded wait ran out; names what was waited for. */
export class DeadlineExceeded extends Error {
  constructor(
    readonly label: string,
    readonly ms: number,
  ) {
    super(`${label} did not settle within ${ms} ms`);
    this.name = "DeadlineExceeded";
  }
}

/** `work`, or a DeadlineExceeded after `ms` (its timer never keeps the caller alive past that). */
export async function withinDeadline<T>(work: Promise<T>, ms: number, label: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(label, ms)), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
