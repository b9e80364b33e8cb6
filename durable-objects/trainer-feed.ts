/** @module The trainer feed: finished rollouts grouped by uid, leased to a trainer and acked. */
import { DurableObject } from "cloudflare:workers";

/** Placeholder until the feed lands; declared now so its binding and migration exist. */
export class TrainerFeed extends DurableObject<Env> {}
