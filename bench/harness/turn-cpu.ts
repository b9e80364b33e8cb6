/**
 * @module The gateway's own CPU for one harness turn, in-process (named so: not the Worker): a
 * captured ~49 KB Claude Code request parsed and translated to chat, matched against the previous
 * call's record, and the next prompt spliced from ids, the work a turn adds in the Worker and the
 * session object beside the model call. Rendering the new part runs in the backend (`/tokenize`),
 * not here. Median and spread of many repeats on this machine's Node (V8, as workerd).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { messagesToChat, parseMessagesRequest } from "../../src/gateway/apis/messages";
import { continuedPrompt } from "../../src/gateway/turns/prompt-ids";
import { matchRequest } from "../../src/gateway/turns/token-exact-turn";
import type { ChatMessage } from "../../src/schemas/chat";
import type { JsonObject } from "../../src/schemas/json";
import type { LlmCall } from "../../src/schemas/llm-call";
import { ROOT } from "./harness-run";

const FIXTURES = resolve(ROOT, "test/fixtures/harness-requests/claude-code");

function translated(file: string): JsonObject {
  const parsed = parseMessagesRequest(JSON.parse(readFileSync(resolve(FIXTURES, file), "utf8")));
  if (!parsed.ok) throw new Error(`${file}: ${JSON.stringify(parsed.error.body)}`);
  return messagesToChat(parsed.request).chat;
}

/** Times the turn's in-process work on the captured second call; answers bytes and ms percentiles. */
export function turnCpu(repeats = 200): { bytes: number; p50: number; p10: number; p90: number } {
  const first = translated("01-messages-main-tool.json");
  const messages = first.messages as ChatMessage[];
  // The previous call as the session recorded it: its messages, and the answer the harness sent back.
  const response = (translated("02-messages-main-done.json").messages as ChatMessage[])[
    messages.length
  ]!;
  const previous = {
    call_id: String((response as Record<string, unknown>).x_gateway_call ?? "r/gw/x"),
    request: { ...first, messages },
    response_message: response,
    prompt_token_ids: Array.from({ length: 11_600 }, (_, i) => i % 150_000),
    completion_token_ids: Array.from({ length: 60 }, (_, i) => i + 7),
  } as unknown as LlmCall;
  const rendered = [...previous.prompt_token_ids, 9, 11, 12, 9, 13];
  const times: number[] = [];
  const body = readFileSync(resolve(FIXTURES, "02-messages-main-done.json"), "utf8");
  for (let i = 0; i < repeats; i++) {
    const started = performance.now();
    const parsed = parseMessagesRequest(JSON.parse(body));
    if (!parsed.ok) throw new Error("fixture does not parse");
    const chat = messagesToChat(parsed.request).chat;
    const match = matchRequest(previous, chat);
    if (match.kind !== "continues")
      throw new Error(`the fixture does not continue: ${match.reason}`);
    continuedPrompt(
      { ...previous, completion_token_ids: [...previous.completion_token_ids, 9] },
      { history: rendered.slice(0, -3), full: rendered },
    );
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { bytes: Buffer.byteLength(body), p50: at(0.5), p10: at(0.1), p90: at(0.9) };
}
