/** @module vLLM's chat-completions response, validated before anything is recorded from it. */
import { z } from "zod";
import { ToolCall } from "./chat";
import { TokenIds } from "./llm-call";

/** One token's logprob entry in `choices[0].logprobs.content`. */
export const TokenLogprob = z.looseObject({
  token: z.string(),
  logprob: z.number(),
});

/**
 * `choices[0].logprobs.content`: one entry per generated token, each with its token and logprob
 * (other fields, such as `top_logprobs`, kept as sent). Checked in one loop rather than as an
 * array of objects: zod runs interpreted in workerd, and per-entry parsing showed in the profiles
 * of a model call's capture; a bad entry is still refused, the error naming this field.
 */
const TokenLogprobs = z.custom<z.infer<typeof TokenLogprob>[]>(
  (value) =>
    Array.isArray(value) &&
    value.every(
      (entry) =>
        typeof entry === "object" &&
        entry !== null &&
        typeof entry.token === "string" &&
        typeof entry.logprob === "number" &&
        Number.isFinite(entry.logprob),
    ),
  "must be an array of { token: string, logprob: number } entries",
);

/**
 * A chat completion as vLLM returns it with `return_token_ids: true`. Fields vLLM adds beyond
 * OpenAI's (`prompt_token_ids`, `choices[].token_ids`, `stop_reason`) are optional so a plain
 * OpenAI-compatible server still validates (its calls are then marked untrainable).
 */
export const VllmChatCompletion = z.looseObject({
  id: z.string(),
  model: z.string(),
  // Token ids are checked in one loop (TokenIds), not per element: see TokenLogprobs.
  prompt_token_ids: TokenIds.nullable().optional(),
  choices: z
    .array(
      z.looseObject({
        index: z.int(),
        message: z.looseObject({
          role: z.literal("assistant"),
          content: z.string().nullable().optional(),
          // A reasoning parser's output: `reasoning` since vLLM PR #27752, `reasoning_content` before
          // (and both during the deprecation window). Either may be absent.
          reasoning: z.string().nullable().optional(),
          reasoning_content: z.string().nullable().optional(),
          tool_calls: z.array(ToolCall).nullable().optional(),
        }),
        logprobs: z.looseObject({ content: TokenLogprobs.nullable() }).nullable().optional(),
        finish_reason: z.string().nullable(),
        stop_reason: z.union([z.string(), z.int()]).nullable().optional(),
        token_ids: TokenIds.nullable().optional(),
      }),
    )
    .min(1, "choices must not be empty"),
  usage: z
    .looseObject({
      prompt_tokens: z.int(),
      completion_tokens: z.int(),
      total_tokens: z.int(),
    })
    .nullable()
    .optional(),
});
export type VllmChatCompletion = z.infer<typeof VllmChatCompletion>;

/** vLLM's `/tokenize` answer. */
export const VllmTokenizeResponse = z.looseObject({
  count: z.int().min(0),
  max_model_len: z.int().optional(),
  tokens: z.array(z.int()).optional(),
});
export type VllmTokenizeResponse = z.infer<typeof VllmTokenizeResponse>;

/**
 * A text completion (`/v1/completions`) as vLLM returns it with `return_token_ids: true`: the
 * prompt's ids sit on the choice, and logprobs use the legacy `token_logprobs` list (with `echo`,
 * the prompt's logprobs come first, the very first one null).
 */
export const VllmCompletion = z.looseObject({
  id: z.string(),
  model: z.string(),
  choices: z
    .array(
      z.looseObject({
        index: z.int(),
        text: z.string(),
        // Token ids are checked in one loop (TokenIds), not per element: see TokenLogprobs.
        prompt_token_ids: TokenIds.nullable().optional(),
        token_ids: TokenIds.nullable().optional(),
        logprobs: z
          .looseObject({ token_logprobs: z.array(z.number().nullable()) })
          .nullable()
          .optional(),
        finish_reason: z.string().nullable(),
      }),
    )
    .min(1, "choices must not be empty"),
  usage: z
    .looseObject({ prompt_tokens: z.int(), completion_tokens: z.int(), total_tokens: z.int() })
    .nullable()
    .optional(),
});
export type VllmCompletion = z.infer<typeof VllmCompletion>;
