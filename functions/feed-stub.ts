/** @module Reaching the trainer feed Durable Object (one instance, named "default"). */
import type { TrainerFeed } from "../durable-objects/trainer-feed";
import type { AppEnv } from "./env";
import type { RpcSurface } from "../src/rpc-surface";

/**
 * Name of the one TrainerFeed instance. One feed serves every training mode: a trainer pulls with
 * `training_mode` to take only its own, stats are in one place, and finished rollouts arrive far
 * below a Durable Object's ~1,000 requests per second.
 */
export const FEED_OBJECT_NAME = "default";

/** The RPC surface of the TrainerFeed stub, derived from the class. */
export type FeedRpc = RpcSurface<TrainerFeed>;

/** The TrainerFeed stub (`name` other than the default only in tests). */
export function feedStub(env: AppEnv, name: string = FEED_OBJECT_NAME): FeedRpc {
  const namespace = env.TRAINER_FEED;
  return namespace.get(namespace.idFromName(name)) as unknown as FeedRpc;
}
