/**
 * @module The Anthropic Messages request body, after https://docs.anthropic.com/en/api/messages
 * and https://docs.anthropic.com/en/api/messages-count-tokens. Objects strip what they do not
 * name: the real API, with beta headers, accepts fields such as `context_management`, `betas`,
 * `cache_control`, `citations` or `container` that Claude Code sends, and so do we, ignoring
 * them. What the real API refuses (a missing field, a wrong type, an unknown block type, values
 * out of range) is refused here too, by `parseMessagesRequest` in `parse-request.ts`.
 */
import { z } from "zod";
import { JsonObject } from "../../../schemas/json";

/** A `text` block; `cache_control` and `citations` are accepted and dropped. */
export const TextBlock = z.object({ type: z.literal("text"), text: z.string() });
export type TextBlock = z.infer<typeof TextBlock>;

/** An `image` block: accepted, rendered as a placeholder (see `content-text.ts`). */
const ImageBlock = z.object({ type: z.literal("image"), source: JsonObject });
/** A `document` block (PDF, plain text, a URL): accepted, rendered as a placeholder. */
const DocumentBlock = z.object({ type: z.literal("document"), source: JsonObject });
/** A `search_result` block: accepted, its title rendered as a placeholder. */
const SearchResultBlock = z.object({ type: z.literal("search_result"), title: z.string() });
/**
 * Claude Code's tool search answers with `tool_reference` blocks inside a `tool_result`; the
 * deferred tool they name is already offered to the model (see `tools-to-chat.ts`).
 */
const ToolReferenceBlock = z.object({ type: z.literal("tool_reference"), tool_name: z.string() });

/** What a `tool_result` may hold besides a string. */
const ToolResultPart = z.discriminatedUnion("type", [
  TextBlock,
  ImageBlock,
  DocumentBlock,
  SearchResultBlock,
  ToolReferenceBlock,
]);

/** A `tool_use` block; `id` is the chat tool call id, unchanged both ways. */
export const ToolUseBlock = z.object({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: JsonObject,
});
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;

/** A `tool_result` block (`is_error` accepted; chat has no place for it, see `user-to-chat.ts`). */
export const ToolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(ToolResultPart)]).optional(),
  is_error: z.boolean().optional(),
});
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;

/** A `thinking` block; `signature` is resent verbatim by harnesses (a turn reference if ours). */
export const ThinkingBlock = z.object({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string().optional(),
});
export type ThinkingBlock = z.infer<typeof ThinkingBlock>;

const RedactedThinkingBlock = z.object({ type: z.literal("redacted_thinking"), data: z.string() });

/**
 * Blocks of the API's server tools (web search, code execution, MCP): only their producer, the
 * real API, writes them, so a harness sends them back only from another server's turns. Accepted
 * as the real API accepts them, rendered as a placeholder naming the block type.
 */
export const SERVER_BLOCK_TYPES = [
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
  "mcp_tool_use",
  "mcp_tool_result",
  "container_upload",
] as const;
const ServerBlocks = SERVER_BLOCK_TYPES.map((type) => z.object({ type: z.literal(type) }));

/** One content block of a message. */
export const ContentBlock = z.discriminatedUnion("type", [
  TextBlock,
  ImageBlock,
  DocumentBlock,
  SearchResultBlock,
  ToolUseBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
  ...ServerBlocks,
]);
export type ContentBlock = z.infer<typeof ContentBlock>;

/**
 * One message. `role: "system"` is not in the public reference, but Claude Code sends it inside
 * `messages` and the API it talks to accepts it; it becomes a chat system message in place.
 */
export const MessageParam = z.object({
  role: z.enum(["user", "assistant", "system"]),
  content: z.union([z.string(), z.array(ContentBlock)]),
});
export type MessageParam = z.infer<typeof MessageParam>;

/**
 * One tool. A client tool has `input_schema` and no `type` (or `type: "custom"`); any other
 * `type` (`web_search_20250305`, `bash_20250124`, …) is a tool the real API defines or runs, not
 * a function the policy can call, and is dropped. `defer_loading` is accepted and ignored: the
 * tool is offered to the model like the others.
 */
export const ToolParam = z
  .object({
    type: z.string().optional(),
    name: z.string().min(1),
    description: z.string().optional(),
    input_schema: JsonObject.optional(),
  })
  .superRefine((tool, ctx) => {
    if ((tool.type === undefined || tool.type === "custom") && tool.input_schema === undefined)
      ctx.addIssue({
        code: "invalid_type",
        expected: "object",
        path: ["input_schema"],
        input: undefined,
      });
  });
export type ToolParam = z.infer<typeof ToolParam>;

/** `tool_choice`; `disable_parallel_tool_use` is accepted and ignored. */
export const ToolChoice = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto") }),
  z.object({ type: z.literal("any") }),
  z.object({ type: z.literal("tool"), name: z.string() }),
  z.object({ type: z.literal("none") }),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

/**
 * `thinking`. The budget is checked as the API checks it (at least 1024) but not passed on: the
 * policy thinks as its template lets it; only `disabled` changes the chat request.
 */
export const ThinkingConfig = z.discriminatedUnion("type", [
  z.object({ type: z.literal("enabled"), budget_tokens: z.int().min(1024) }),
  z.object({ type: z.literal("disabled") }),
  z.object({ type: z.literal("adaptive") }),
]);
export type ThinkingConfig = z.infer<typeof ThinkingConfig>;

/** What a Messages body and a count_tokens body share. */
const conversationFields = {
  model: z.string(),
  messages: z.array(MessageParam).min(1),
  system: z.union([z.string(), z.array(TextBlock)]).optional(),
  tools: z.array(ToolParam).optional(),
  tool_choice: ToolChoice.optional(),
  thinking: ThinkingConfig.optional(),
};

/** The body of `POST /v1/messages`. */
export const MessagesRequest = z.object({
  ...conversationFields,
  max_tokens: z.int().min(1),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.int().min(0).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  metadata: z.object({ user_id: z.string().nullable().optional() }).optional(),
});
export type MessagesRequest = z.infer<typeof MessagesRequest>;

/** The body of `POST /v1/messages/count_tokens`: the conversation, no sampling fields. */
export const MessagesCountTokensRequest = z.object(conversationFields);
export type MessagesCountTokensRequest = z.infer<typeof MessagesCountTokensRequest>;
