/**
 * Unit: request bodies captured from the real Codex CLI (0.171.0, `codex exec`; see
 * test/fixtures/harness-requests/) parse, translate, and extend one another call by call.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  chatToResponses,
  parseResponsesRequest,
  responsesToChat,
} from "../../../../../src/gateway/apis/responses";

const DIR = join(import.meta.dirname, "../../../../fixtures/harness-requests/codex");

/** The captured Responses calls, in the order Codex made them. */
function capturedCalls(): Array<{ name: string; body: unknown }> {
  const names = readdirSync(DIR)
    .filter((name) => name.endsWith(".json") && !name.endsWith(".meta.json"))
    .sort();
  return names
    .filter((name) => {
      const meta = JSON.parse(
        readFileSync(join(DIR, name.replace(/\.json$/, ".meta.json")), "utf8"),
      );
      return String(meta.path).endsWith("/responses");
    })
    .map((name) => ({ name, body: JSON.parse(readFileSync(join(DIR, name), "utf8")) }));
}

const calls = capturedCalls();
const chats = calls.map(({ body }) => responsesToChat(parseResponsesRequest(body)));

describe("Codex's captured requests", () => {
  it("are there to test: at least a first call and its follow-up", () => {
    expect(calls.length).toBeGreaterThanOrEqual(2);
  });

  it.each(calls.map((call, i) => [call.name, i] as const))("%s parses and translates", (_, i) => {
    const { chat, stream } = chats[i]!;
    expect(stream).toBe(true);
    const messages = chat.messages as Array<{ role: string }>;
    expect(messages.map((m) => m.role).slice(0, 4)).toEqual(["system", "system", "user", "user"]);
    const names = (chat.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(names).toContain("exec_command");
    // The multi_agent_v1 namespace (sub-agents) is not translated: see tools-to-chat.ts.
    expect(names).not.toContain("spawn_agent");
    expect(JSON.stringify(responsesToChat(parseResponsesRequest(calls[i]!.body)).chat)).toBe(
      JSON.stringify(chat),
    );
  });

  it("give each call's messages, then its assistant turn, as the start of the next call's", () => {
    for (let i = 1; i < chats.length; i++) {
      const earlier = chats[i - 1]!.chat.messages as unknown[];
      const later = chats[i]!.chat.messages as Array<Record<string, unknown>>;
      expect(later.slice(0, earlier.length)).toEqual(earlier);
      expect(later[earlier.length]).toMatchObject({ role: "assistant" });
      expect(chats[i]!.chat.tools).toEqual(chats[i - 1]!.chat.tools);
    }
  });

  it("carry the gateway's turn reference back, so the resent turn names its call", () => {
    const turns = chats
      .flatMap(({ chat }) => chat.messages as Array<Record<string, unknown>>)
      .filter((message) => message.role === "assistant");
    expect(turns.length).toBeGreaterThan(0);
    for (const turn of turns) expect(turn.x_gateway_call).toEqual(expect.any(String));
  });

  it("can be answered, the request's settings echoed", () => {
    const request = parseResponsesRequest(calls[0]!.body);
    const reply = { choices: [{ message: { content: "done" }, finish_reason: "stop" }] };
    const response = chatToResponses(reply, { model: request.model, callId: "c", request });
    expect(response).toMatchObject({ status: "completed", model: "policy", tools: request.tools });
  });
});
