/**
 * @module The text a content block stands for in a chat message, and how one message's pieces
 * are joined. Only text reaches the policy: the chat request is rendered into token ids by a text
 * template, so an image, a document or a server tool's block becomes a short placeholder
 * (`[image]`) rather than a chat `image_url` part: the policy could not see the picture, and a
 * base64 payload would be stored again in every later call of the conversation.
 */
import type { ContentBlock } from "./messages-request";

/**
 * Joins the text pieces of one message: "\n", as vLLM joins a chat message's text parts for a
 * template that takes string content (Qwen's), so a Messages block list reads as it would had
 * the harness sent the same parts to vLLM directly. A one-block list equals the plain string.
 */
export const PIECE_SEPARATOR = "\n";

/** What `blockText` reads: any content block, or a part of a `tool_result`. */
type TextualBlock =
  | ContentBlock
  | { type: "tool_reference"; tool_name: string }
  | { type: "search_result"; title: string };

/**
 * The text `block` contributes to a message's content, or null for a block that is not content
 * (`tool_use`, `tool_result`, `thinking`, `redacted_thinking`: each has its own place in chat).
 */
export function blockText(block: TextualBlock): string | null {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return "[image]";
    case "document":
      return "[document]";
    case "search_result":
      return `[search result: ${block.title}]`;
    case "tool_reference":
      return `[tool: ${block.tool_name}]`;
    case "tool_use":
    case "tool_result":
    case "thinking":
    case "redacted_thinking":
      return null;
    default:
      return `[${block.type}]`; // a server tool's block (see SERVER_BLOCK_TYPES)
  }
}

/** The text of a content that is a string or a list of blocks. */
export function contentText(content: string | readonly TextualBlock[] | undefined): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  const pieces: string[] = [];
  for (const block of content) {
    const text = blockText(block);
    if (text !== null) pieces.push(text);
  }
  return pieces.join(PIECE_SEPARATOR);
}
