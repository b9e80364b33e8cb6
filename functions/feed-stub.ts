/** @module Reaching the trainer feed Durable Object (one instance, named "default"), and feeding it results. */
import type { PullLimits } from "../src/runtime/feed/feed-core";
import type { AckResult, ConfigureResult, IngestResult, PullResult } from "../src/runtime/feed/feed-results";
import type { FeedConfig, FeedStats, StatsQueryInput } from "../src/schemas/feed";
import type { ResultMessage } from "../src/schemas/result-message";
import { dataManagers } from "../src/sink/training-modes";
import { InvalidInputError } from "../src/errors";
import type { AppEnv } from "./env";

/**
 * Name of the one TrainerFeed instance. One feed serves every training mode: a trainer pulls with
 * `training_mode` to take only its own, stats are in one place, and finished rollouts arrive far
 * below a Durable Object's ~1,000 requests per second.
 */
export const FEED_OBJECT_NAME = "default";

/** The RPC surface of the TrainerFeed stub, spelled out (the generic stub types are too deep for the compiler). */
export interface FeedRpc {
  ingest(message: unknown): Promise<IngestResult>;
  pull(request: unknown, currentPolicyVersion: number, limits?: PullLimits): Promise<PullResult>;
  returnGroups(leaseId: string, uids: string[]): Promise<number>;
  ack(leaseId: string): Promise<AckResult>;
  stats(query?: StatsQueryInput): Promise<FeedStats>;
  config(): Promise<FeedConfig>;
  configure(patch: unknown): Promise<ConfigureResult>;
}

/** The TrainerFeed stub (`name` other than the default only in tests). */
export function feedStub(env: AppEnv, name: string = FEED_OBJECT_NAME): FeedRpc {
  const namespace = env.TRAINER_FEED;
  return namespace.get(namespace.idFromName(name)) as unknown as FeedRpc;
}

/**
 * Hands one finished rollout to the trainer feed if its data manager feeds the trainer (`train`);
 * `infer` results are only stored. An unknown data manager or a message the feed refuses throws,
 * so the queue retries it and then parks it in the dead-letter queue where it can be inspected.
 */
export async function ingestResult(env: AppEnv, message: ResultMessage): Promise<void> {
  if (!dataManagers.resolve(message.data_manager).feeds_trainer) return;
  const result = await feedStub(env).ingest(message);
  if (!result.ok) {
    throw new InvalidInputError(`trainer feed refused rollout ${message.rollout_id} (${result.reason}): ${result.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`, { details: result.errors });
  }
}
