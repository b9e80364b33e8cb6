/** @module Bounded fan-out of RPCs from one invocation. */

/** Runs `fn` over `items` with at most `parallelism` calls pending (in item order as slots free up). */
export async function eachLimited<T>(
  items: readonly T[],
  parallelism: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, items.length) }, worker));
}
