/** @module Rebuilding one call's record from streamed chunks (chat or text completions). */
import { z } from "zod";
import { ModelError } from "../../errors";
import type { ToolCall } from "../../schemas/chat";
import { assistantMessage, replyReasoning } from "./chat-capture";
import { type CapturedOutput, completeCapture } from "./captured-output";
import { logprobsAligned } from "../../schemas/training-tokens";

const Usage = z.looseObject({
  prompt_tokens: z.int(),
  completion_tokens: z.int(),
  total_tokens: z.int(),
});

/** One streamed chunk of either endpoint, as loosely as needed to pick out what we record. */
const StreamChunk = z.looseObject({
  prompt_token_ids: z.array(z.int()).nullable().optional(),
  usage: Usage.nullable().optional(),
  choices: z
    .array(
      z.looseObject({
        index: z.int().default(0),
        text: z.string().optional(),
        delta: z
          .looseObject({
            content: z.string().nullable().optional(),
            reasoning: z.string().nullable().optional(),
            reasoning_content: z.string().nullable().optional(),
            tool_calls: z
              .array(
                z.looseObject({
                  index: z.int(),
                  id: z.string().nullable().optional(),
                  function: z
                    .looseObject({
                      name: z.string().nullable().optional(),
                      arguments: z.string().nullable().optional(),
                    })
                    .optional(),
                }),
              )
              .nullable()
              .optional(),
          })
          .optional(),
        logprobs: z
          .looseObject({
            content: z
              .array(z.looseObject({ logprob: z.number(), token: z.string().optional() }))
              .nullable()
              .optional(),
            token_logprobs: z.array(z.number().nullable()).optional(),
          })
          .nullable()
          .optional(),
        prompt_token_ids: z.array(z.int()).nullable().optional(),
        token_ids: z.array(z.int()).nullable().optional(),
        finish_reason: z.string().nullable().optional(),
        stop_reason: z.union([z.string(), z.int()]).nullable().optional(),
      }),
    )
    .default([]),
});

/**
 * Accumulates what a stream says about choice 0: prompt ids (first chunk), completion id and
 * logprob deltas, content, reasoning and tool-call deltas (merged by index), finish reason, usage.
 */
export class StreamAssembler {
  #promptIds: number[] = [];
  #completionIds: number[] = [];
  #logprobs: number[] = [];
  #tokenStrs: string[] = [];
  #content = "";
  #reasoning = "";
  #reasoningField: "reasoning" | "reasoning_content" | null = null;
  #tools = new Map<number, { id: string; name: string; arguments: string }>();
  #finishReason: string | null = null;
  #stopReason: string | number | null = null;
  #usage: z.infer<typeof Usage> | null = null;
  #chunks = 0;

  /** Takes one `data:` payload; `[DONE]` is ignored, anything unparseable is an upstream fault. */
  push(payload: string): void {
    if (payload.trim() === "[DONE]") return;
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch (cause) {
      throw new ModelError(`upstream stream sent malformed JSON (${payload.length} bytes)`, {
        retryable: false,
        cause,
      });
    }
    const chunk = StreamChunk.safeParse(json);
    if (!chunk.success)
      throw new ModelError(`upstream stream chunk is invalid: ${chunk.error.issues[0]?.message}`, {
        retryable: false,
      });
    this.#chunks++;
    if (chunk.data.prompt_token_ids) this.#promptIds = chunk.data.prompt_token_ids;
    if (chunk.data.usage) this.#usage = chunk.data.usage;
    for (const choice of chunk.data.choices) {
      if (choice.index !== 0) continue;
      if (choice.prompt_token_ids) this.#promptIds = choice.prompt_token_ids;
      if (choice.token_ids) this.#completionIds.push(...choice.token_ids);
      for (const entry of choice.logprobs?.content ?? []) {
        this.#logprobs.push(entry.logprob);
        if (entry.token !== undefined) this.#tokenStrs.push(entry.token);
      }
      // With `echo`, a completions stream's first chunk lists the prompt's logprobs before its token's: keep the token's.
      const tokenLogprobs = choice.logprobs?.token_logprobs ?? [];
      const own =
        choice.token_ids && tokenLogprobs.length > choice.token_ids.length
          ? tokenLogprobs.slice(tokenLogprobs.length - choice.token_ids.length)
          : tokenLogprobs;
      for (const value of own) this.#logprobs.push(value ?? 0);
      this.#content += choice.text ?? choice.delta?.content ?? "";
      this.#reasoning += (choice.delta && replyReasoning(choice.delta)) ?? "";
      this.#reasoningField ??= choice.delta?.reasoning
        ? "reasoning"
        : choice.delta?.reasoning_content
          ? "reasoning_content"
          : null;
      for (const delta of choice.delta?.tool_calls ?? []) {
        const tool = this.#tools.get(delta.index) ?? { id: "", name: "", arguments: "" };
        tool.id ||= delta.id ?? "";
        tool.name += delta.function?.name ?? "";
        tool.arguments += delta.function?.arguments ?? "";
        this.#tools.set(delta.index, tool);
      }
      if (choice.finish_reason) {
        this.#finishReason = choice.finish_reason;
        this.#stopReason = choice.stop_reason ?? null;
      }
    }
  }

  /** How many completion tokens arrived so far (cheap: `soFar` copies the ids). */
  get completionCount(): number {
    return this.#completionIds.length;
  }

  /**
   * The prompt ids and the completion ids received so far (what a resumed call continues from),
   * and whether the reply is inside its think block (reasoning came, no content yet), with the
   * field the server sends reasoning in.
   */
  soFar(): {
    promptIds: number[];
    completionIds: number[];
    finished: boolean;
    inReasoning: boolean;
    reasoningField: "reasoning" | "reasoning_content" | null;
  } {
    return {
      promptIds: [...this.#promptIds],
      completionIds: [...this.#completionIds],
      finished: this.#finishReason !== null,
      inReasoning: this.#reasoning !== "" && this.#content === "",
      reasoningField: this.#reasoningField,
    };
  }

  /**
   * What arrived before the stream was cut off, never throwing: finish reason `abort` (vLLM's own
   * for an aborted request), logprobs dropped unless they line up with the tokens received.
   */
  partial(): CapturedOutput {
    const logprobs = logprobsAligned({
      logprobs: this.#logprobs,
      completion_token_ids: this.#completionIds,
    })
      ? this.#logprobs
      : [];
    return completeCapture({
      response_message: assistantMessage(this.#content, [], this.#reasoning || null),
      prompt_token_ids: this.#promptIds,
      completion_token_ids: this.#completionIds,
      logprobs,
      finish_reason: "abort",
      usage: null,
    });
  }

  /** The record of the whole stream. */
  finish(): CapturedOutput {
    if (this.#chunks === 0)
      throw new ModelError("upstream stream ended without any chunk", { retryable: false });
    const toolCalls: ToolCall[] = [...this.#tools.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, tool]) => ({
        id: tool.id,
        type: "function",
        function: { name: tool.name, arguments: tool.arguments },
      }));
    const content = toolCalls.length > 0 && this.#content === "" ? null : this.#content;
    return completeCapture({
      response_message: assistantMessage(content, toolCalls, this.#reasoning || null),
      prompt_token_ids: this.#promptIds,
      completion_token_ids: this.#completionIds,
      logprobs: this.#logprobs,
      completion_token_strs: this.#tokenStrs,
      finish_reason: this.#finishReason,
      ...(this.#stopReason !== null ? { stop_reason: this.#stopReason } : {}),
      usage: this.#usage,
    });
  }
}
