/**
 * @module What 1M agent steps cost on Workers Standard, priced from a bench run's own per-step
 * counts: the table docs/scale.md shows, printed by the run that measured it. Prices are
 * Cloudflare's list prices (Workers, Durable Objects, Queues and R2 pricing pages, as cited in
 * docs/scale.md); included monthly allowances are ignored, so this is the marginal cost.
 */

/** USD per unit. */
export const PRICES = {
  workerRequest: 0.3 / 1e6,
  workerCpuMs: 0.02 / 1e6,
  objectRequest: 0.15 / 1e6,
  objectGbSecond: 12.5 / 1e6,
  sqliteRowWritten: 1.0 / 1e6,
  sqliteRowRead: 0.001 / 1e6,
  queueOperation: 0.4 / 1e6,
  r2ClassA: 4.5 / 1e6,
  r2ClassB: 0.36 / 1e6,
} as const;

/** Memory a Durable Object is billed for while awake (128 MB, whatever it uses). */
const OBJECT_GB = 0.128;

/** Per step, as measured (or, where marked, as counted from the code) in one bench run. */
export interface StepCounts {
  /** Worker invocations per step (create + drive route per rollout; counted from the code). */
  workerRequests: number;
  /** The Worker's own CPU per step (workerd CPU less the local R2/queue simulators' share). */
  workerCpuMs: number;
  /** Requests served by Durable Objects (sessions, shards, policy), from their counters. */
  objectRequests: number;
  /** Seconds a session is awake per step: its alarm waits for the drive, so about a step's latency (modelled). */
  sessionAwakeS: number;
  sqliteRowsWritten: number;
  sqliteRowsRead: number;
  /** Queue operations per step (write, read, delete of the work and result messages; counted from the code). */
  queueOperations: number;
  /** R2 writes and reads per step (3 objects per rollout, one read when the feed serves it; counted from the code). */
  r2ClassA: number;
  r2ClassB: number;
}

/** The priced lines for 1M steps, largest first, and the total. */
export function priceMillionSteps(per: StepCounts): string[] {
  const steps = 1e6;
  const items: Array<[string, number, number]> = [
    [
      "SQLite rows written",
      per.sqliteRowsWritten * steps,
      per.sqliteRowsWritten * steps * PRICES.sqliteRowWritten,
    ],
    [
      "session duration (GB-s)",
      per.sessionAwakeS * OBJECT_GB * steps,
      per.sessionAwakeS * OBJECT_GB * steps * PRICES.objectGbSecond,
    ],
    ["R2 class A", per.r2ClassA * steps, per.r2ClassA * steps * PRICES.r2ClassA],
    [
      "Durable Object requests",
      per.objectRequests * steps,
      per.objectRequests * steps * PRICES.objectRequest,
    ],
    [
      "queue operations",
      per.queueOperations * steps,
      per.queueOperations * steps * PRICES.queueOperation,
    ],
    [
      "Worker requests",
      per.workerRequests * steps,
      per.workerRequests * steps * PRICES.workerRequest,
    ],
    ["Worker CPU (ms)", per.workerCpuMs * steps, per.workerCpuMs * steps * PRICES.workerCpuMs],
    ["R2 class B", per.r2ClassB * steps, per.r2ClassB * steps * PRICES.r2ClassB],
    [
      "SQLite rows read",
      per.sqliteRowsRead * steps,
      per.sqliteRowsRead * steps * PRICES.sqliteRowRead,
    ],
  ];
  items.sort((a, b) => b[2] - a[2]);
  const total = items.reduce((sum, [, , usd]) => sum + usd, 0);
  return [
    ...items.map(
      ([what, count, usd]) =>
        `    ${what.padEnd(26)} ${(count / 1e6).toFixed(2).padStart(8)} M   $${usd.toFixed(2).padStart(6)}`,
    ),
    `    ${"total".padEnd(26)} ${"".padStart(10)}   $${total.toFixed(2).padStart(6)}  (${((100 * (items.find(([w]) => w === "SQLite rows written")?.[2] ?? 0)) / total).toFixed(0)}% SQLite rows written)`,
  ];
}
