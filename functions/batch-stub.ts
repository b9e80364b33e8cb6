/** @module Reaching a batch's tracker from the results consumer. */
import type { ResultMessage } from "../src/schemas/result-message";
import type { AppEnv } from "./env";

/** Reports one finished rollout to its batch's progress. (Filled in with batches.) */
export async function reportBatchResult(_env: AppEnv, _message: ResultMessage): Promise<void> {}
