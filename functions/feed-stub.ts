/** @module Reaching the trainer feed: its shards (TrainerFeed objects) and the sharded feed over them. */
import type { TrainerFeed } from "../durable-objects/trainer-feed";
import { MisconfiguredError } from "../src/errors";
import { feedLayout, isLayoutProblem, type FeedLayout } from "../src/runtime/feed/feed-shards";
import { ShardedFeed, type FeedShardPort } from "../src/runtime/feed/sharded-feed";
import type { AppEnv } from "./env";
import type { RpcSurface } from "../src/rpc-surface";

/**
 * Name of the single feed object (FEED_SHARDS unset or 1). One feed serves every training mode: a
 * trainer pulls with `training_mode` to take only its own; with more shards each holds the groups
 * whose uid hashes to it (src/runtime/feed/feed-shards.ts).
 */
export const FEED_OBJECT_NAME = "default";

/** The RPC surface of the TrainerFeed stub, derived from the class. */
export type FeedRpc = RpcSurface<TrainerFeed>;

/** One TrainerFeed object by name (the single feed by default; tests name their own). */
export function feedStub(env: AppEnv, name: string = FEED_OBJECT_NAME): FeedRpc {
  const namespace = env.TRAINER_FEED;
  return namespace.get(namespace.idFromName(name)) as unknown as FeedRpc;
}

/** The layout FEED_SHARDS / FEED_PREVIOUS_SHARDS name; a MisconfiguredError (503, naming the variable) if either is invalid. */
export function feedLayoutOf(env: AppEnv): FeedLayout {
  const layout = feedLayout(env);
  if (isLayoutProblem(layout)) throw new MisconfiguredError(layout.message, { details: [{ path: layout.variable, message: layout.message }] });
  return layout;
}

/** The feed over its shards, as routes, the results consumer and batch reports reach it. */
export function feedRouter(env: AppEnv): ShardedFeed {
  return new ShardedFeed(feedLayoutOf(env), (name) => feedStub(env, name) as unknown as FeedShardPort);
}
