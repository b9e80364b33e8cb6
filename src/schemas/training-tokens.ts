/**
 * @module The one rule for what a recorded call needs to be trained on: the engine's prompt and
 * completion token ids and one logprob per completion token. The gateway applies it when it
 * records a call (`trainable`), the capture when it keeps a stream's logprobs, and the sample
 * builder when it picks calls; none of them spells it out again.
 */
/** The token parts of a call the rule reads. */
export interface TrainingTokens {
  prompt_token_ids: readonly number[];
  completion_token_ids: readonly number[];
  logprobs: readonly number[];
}

/** Whether `logprobs` holds exactly one entry per completion token. */
export function logprobsAligned(
  tokens: Pick<TrainingTokens, "completion_token_ids" | "logprobs">,
): boolean {
  return tokens.logprobs.length === tokens.completion_token_ids.length;
}

/** What a call lacks to be trained on (`missing_token_ids`, `missing_logprobs`), or null when it has it all. */
export function missingTrainingTokens(
  tokens: TrainingTokens,
): "missing_token_ids" | "missing_logprobs" | null {
  if (tokens.prompt_token_ids.length === 0 || tokens.completion_token_ids.length === 0)
    return "missing_token_ids";
  if (!logprobsAligned(tokens)) return "missing_logprobs";
  return null;
}
