/** @module One batch of rollouts: its rows, fan-out, progress and cancel. */
import { DurableObject } from "cloudflare:workers";

/** Placeholder until batches land; declared now so its binding and migration exist. */
export class BatchTracker extends DurableObject<Env> {}
