/** @module OpenAI-compatible chat shapes shared by agents, the gateway and the HTTP API. */
import { z } from "zod";
import { JsonObject } from "./json";

/** One function call the model asked for, as OpenAI and vLLM return it (`arguments` is a JSON string). */
export const ToolCall = z.object({
  id: z.string(),
  type: z.literal("function").default("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCall>;

/** A text part of multi-part message content. */
export const TextPart = z.looseObject({ type: z.literal("text"), text: z.string() });
export type TextPart = z.infer<typeof TextPart>;

/** One chat message in OpenAI's wire shape (content may be a string, text parts, or null next to tool calls). */
export const ChatMessage = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(TextPart), z.null()]).optional(),
  name: z.string().optional(),
  tool_calls: z.array(ToolCall).optional(),
  tool_call_id: z.string().optional(),
  reasoning_content: z.string().nullable().optional(),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

/** A function tool offered to the model (OpenAI `tools[]` entry). */
export const ToolDefinition = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: JsonObject.optional(),
  }),
});
export type ToolDefinition = z.infer<typeof ToolDefinition>;

/** Returns a message's text whether its content is a string, text parts or absent. */
export function messageText(message: Pick<ChatMessage, "content">): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => part.text).join("");
  return "";
}
