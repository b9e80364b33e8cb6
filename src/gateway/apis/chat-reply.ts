/**
 * @module The whole chat completion the session answers a translated request with (OpenAI's
 * shape, as vLLM returns it), read leniently by every API's translator: only the fields a Messages
 * or Responses answer is built from are checked, so a `VllmChatCompletion` or any
 * OpenAI-compatible reply passes.
 */
import { z } from "zod";
import type { JsonObject } from "../../schemas/json";

/** One tool call of the reply; `arguments` is the JSON text the model wrote, maybe malformed. */
const ReplyToolCall = z.looseObject({
  id: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

/** A chat completion, as far as the translated answers need it. */
export const ChatReply = z.looseObject({
  created: z.number().nullish(),
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: z.string().nullish(),
          // vLLM's reasoning parser: `reasoning_content` before PR #27752, `reasoning` after.
          reasoning_content: z.string().nullish(),
          reasoning: z.string().nullish(),
          tool_calls: z.array(ReplyToolCall).nullish(),
        }),
        finish_reason: z.string().nullish(),
        // vLLM: the stop string that ended the answer, a stop token id, or null for EOS.
        stop_reason: z.union([z.string(), z.number()]).nullish(),
      }),
    )
    .min(1),
  usage: z
    .looseObject({
      prompt_tokens: z.number(),
      completion_tokens: z.number(),
      total_tokens: z.number().optional(),
    })
    .nullish(),
});
export type ChatReply = z.infer<typeof ChatReply>;
/** What the translators accept as a reply: any JSON object (checked on use) or a typed completion such as a `VllmChatCompletion`. */
export type ChatReplyJson = z.input<typeof ChatReply> | JsonObject;

/** The reply is not a chat completion: the gateway's fault (502), never the harness's. */
export class UnusableReplyError extends Error {
  override readonly name = "UnusableReplyError";
  /** HTTP status: what the APIs' error shapes and stream failures are chosen from. */
  readonly status = 502;
}

/** `reply` checked; throws `UnusableReplyError` naming the first bad field. */
export function readChatReply(reply: ChatReplyJson): ChatReply {
  const parsed = ChatReply.safeParse(reply);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
  throw new UnusableReplyError(
    `the model's reply is not a chat completion (${where}${issue?.message ?? "invalid"})`,
  );
}
