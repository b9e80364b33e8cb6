/** @module What a caller may send to a rollout's gateway (OpenAI's request shapes, checked loosely). */
import { z } from "zod";
import { ChatMessage, ToolDefinition } from "./chat";

const positiveInt = (field: string) =>
  z.int(`${field} must be an integer`).min(1, `${field} must be >= 1`);

/**
 * `POST …/llm/v1/chat/completions`. Only the fields the gateway reads are checked; everything else
 * passes through to the engine unchanged (vLLM's own validation answers for it).
 */
export const GatewayChatRequest = z.looseObject({
  model: z.string().optional(),
  messages: z.array(ChatMessage).min(1, "messages must not be empty"),
  tools: z.array(ToolDefinition).optional(),
  stream: z.boolean().optional(),
  // Several choices are refused in training mode by the gateway (request-shaping.ts), served otherwise.
  n: positiveInt("n").optional(),
  max_tokens: positiveInt("max_tokens").nullable().optional(),
  max_completion_tokens: positiveInt("max_completion_tokens").nullable().optional(),
});
export type GatewayChatRequest = z.infer<typeof GatewayChatRequest>;

/** `POST …/llm/v1/completions`: one prompt, as text or token ids. */
export const GatewayCompletionRequest = z.looseObject({
  model: z.string().optional(),
  prompt: z.union(
    [z.string(), z.array(z.int().min(0)).min(1)],
    "prompt must be a string or an array of token ids",
  ),
  stream: z.boolean().optional(),
  n: positiveInt("n").optional(),
  max_tokens: positiveInt("max_tokens").nullable().optional(),
});
export type GatewayCompletionRequest = z.infer<typeof GatewayCompletionRequest>;
