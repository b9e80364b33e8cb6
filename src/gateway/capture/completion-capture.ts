/** @module Capturing a non-streaming text completion (`/v1/completions`). */
import { ModelError } from "../../errors";
import { VllmCompletion } from "../../schemas/vllm-chat";
import { type CapturedOutput, completeCapture } from "./captured-output";

/** Validates a text completion and keeps its token ids and logprobs; the text becomes an assistant message. */
export function captureCompletion(raw: unknown): CapturedOutput {
  const parsed = VllmCompletion.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ModelError(`upstream reply is not a completion: ${issue?.message ?? "invalid"} at ${issue?.path.join(".") ?? "?"}`, { retryable: true });
  }
  const choice = parsed.data.choices[0]!;
  return completeCapture({
    response_message: { role: "assistant", content: choice.text },
    prompt_token_ids: choice.prompt_token_ids ?? [],
    completion_token_ids: choice.token_ids ?? [],
    logprobs: (choice.logprobs?.token_logprobs ?? []).map((value) => value ?? 0),
    finish_reason: choice.finish_reason,
    usage: parsed.data.usage ?? null,
  });
}
