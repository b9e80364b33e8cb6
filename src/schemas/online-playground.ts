/**
 * @module The dashboard's playground (docs/dashboard.md): a person chats with an application's
 * serving versions through the dashboard session and rates each answer. These are the two bodies
 * its page posts; the server turns them into an online call and a feedback event.
 */
import { z } from "zod";
import { OnlineSessionId } from "./online";

/** The source a playground rating is recorded under (the feedback rule keeps the last per source). */
export const PLAYGROUND_SOURCE = "playground";

/** One message of the conversation so far, as the page keeps it. */
const PlaygroundMessage = z
  .object({
    role: z.enum(["user", "assistant"]),
    content: z.string().max(20_000, "content must be at most 20000 characters"),
  })
  .strict();

/** `POST /online/:app/playground/chat`: the conversation so far, its last message the person's. */
export const PlaygroundChatRequest = z
  .object({
    session_id: OnlineSessionId,
    messages: z
      .array(PlaygroundMessage)
      .min(1, "messages must not be empty")
      .max(200, "messages must be at most 200")
      .refine((m) => m.at(-1)?.role === "user", "the last message must be the person's (user)"),
    max_tokens: z.int().min(1).max(4096).default(256),
  })
  .strict();
export type PlaygroundChatRequest = z.infer<typeof PlaygroundChatRequest>;

/** `POST /online/:app/playground/feedback`: a thumbs up (reward 1) or down (reward 0) on the session. */
export const PlaygroundRating = z
  .object({ session_id: OnlineSessionId, rating: z.enum(["up", "down"]) })
  .strict();
export type PlaygroundRating = z.infer<typeof PlaygroundRating>;
