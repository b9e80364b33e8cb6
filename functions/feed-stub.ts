/** @module Reaching the trainer feed from the results consumer. */
import type { ResultMessage } from "../src/schemas/result-message";
import type { AppEnv } from "./env";

/** Hands one finished rollout to the trainer feed, if its data manager feeds the trainer. (Filled in with the feed.) */
export async function ingestResult(_env: AppEnv, _message: ResultMessage): Promise<void> {}
