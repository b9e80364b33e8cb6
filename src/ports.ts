/** @module The small interfaces through which runtime code reaches platform services. */
import type { WorkMessage } from "./schemas/work-message";

/** A value SQLite stores. */
export type SqlValue = string | number | null | ArrayBuffer;

/** The slice of a Durable Object's `ctx.storage.sql` the session uses. */
export interface SqlPort {
  exec<T extends Record<string, SqlValue>>(
    query: string,
    ...bindings: SqlValue[]
  ): { toArray(): T[] };
}

/** The slice of a Durable Object's storage beyond SQL: atomic writes and the alarm. */
export interface StoragePort {
  sql: SqlPort;
  /** Runs `fn` in one SQLite transaction. */
  transactionSync<T>(fn: () => T): T;
  setAlarm(scheduledTime: number): Promise<void> | void;
  /** Cancels the alarm, including one set while the alarm handler runs (absent: nothing is cancelled). */
  deleteAlarm?(): Promise<void> | void;
}

/** Sends work to the driver queue (ROLLOUT_WORK). */
export interface WorkQueuePort {
  send(message: WorkMessage): Promise<void>;
}

/** The clock; injected so tests can move time. */
export type Clock = () => number;

/** The slice of an R2 bucket the sink and datasets use (keys are strings, bodies UTF-8 JSON or bytes). */
export interface BlobStorePort {
  put(key: string, body: string | ArrayBuffer, contentType: string): Promise<void>;
  get(key: string): Promise<ArrayBuffer | null>;
}

/** A stored object whose size is known before its body is read. */
export interface SizedBlob {
  size: number;
  bytes(): Promise<ArrayBuffer>;
  /** Lets go of the body without reading it. */
  discard(): void;
}

/** Reads objects with their size first (R2's `get` answers the size before the body streams). */
export interface SizedBlobReader {
  get(key: string): Promise<SizedBlob | null>;
}

/** Sends finished-rollout announcements (ROLLOUT_RESULTS). */
export interface ResultsQueuePort {
  send(message: import("./schemas/result-message").ResultMessage): Promise<void>;
}

/** Offers an external rollout to the runners of its runner agent (the sharded claim queue). */
export interface ClaimOfferPort {
  offer(runnerAgent: string, rolloutId: string): Promise<void>;
}

/** Tells a batch what a runner did with one of its rollouts (shown per runner by `GET /v1/batches/:id`). */
export interface RunnerEventsPort {
  report(batchId: string, event: import("./schemas/batch-runners").RunnerEvent): Promise<void>;
}

/**
 * Drives `rolloutId` in a separate invocation of the Worker (in a Worker: the `DRIVER` service
 * binding's drive route) and resolves when that invocation is done; `signal` abandons it.
 */
export type DriveTrigger = (rolloutId: string, signal: AbortSignal) => Promise<void>;
