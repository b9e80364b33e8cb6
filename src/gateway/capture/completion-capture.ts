/** @module Capturing a non-streaming text completion (`/v1/completions`). */
import { ModelError } from "../../errors";
import { VllmCompletion } from "../../schemas/vllm-chat";
import { type CapturedOutput, completeCapture } from "./captured-output";

/**
 * The completion tokens' logprobs. With `echo`, vLLM lists the prompt's logprobs first (the
 * first one null: no context); those are dropped so one logprob per completion token remains.
 */
function completionLogprobs(
  tokenLogprobs: ReadonlyArray<number | null>,
  promptTokens: number,
  completionTokens: number,
): number[] {
  const echoed = promptTokens > 0 && tokenLogprobs.length === promptTokens + completionTokens;
  return (echoed ? tokenLogprobs.slice(promptTokens) : tokenLogprobs).map((value) => value ?? 0);
}

/** Validates a text completion and keeps its token ids and logprobs; the text becomes an assistant message. */
export function captureCompletion(raw: unknown): CapturedOutput {
  const parsed = VllmCompletion.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ModelError(
      `upstream reply is not a completion: ${issue?.message ?? "invalid"} at ${issue?.path.join(".") ?? "?"}`,
      { retryable: true },
    );
  }
  const choice = parsed.data.choices.find((c) => c.index === 0) ?? parsed.data.choices[0]!;
  const promptIds = choice.prompt_token_ids ?? [];
  const completionIds = choice.token_ids ?? [];
  return completeCapture({
    response_message: { role: "assistant", content: choice.text },
    prompt_token_ids: promptIds,
    completion_token_ids: completionIds,
    logprobs: completionLogprobs(
      choice.logprobs?.token_logprobs ?? [],
      promptIds.length,
      completionIds.length,
    ),
    finish_reason: choice.finish_reason,
    usage: parsed.data.usage ?? null,
  });
}
