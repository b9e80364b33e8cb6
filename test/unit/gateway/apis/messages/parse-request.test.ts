import { describe, expect, it } from "vitest";
import {
  parseMessagesCountTokensRequest,
  parseMessagesRequest,
} from "../../../../../src/gateway/apis/messages";

const base = {
  model: "claude-sonnet-4-5",
  max_tokens: 256,
  messages: [{ role: "user", content: "hi" }],
};

/** The error message for `body`, which must be refused with 400 invalid_request_error. */
function refusal(
  body: unknown,
  parse: (
    body: unknown,
  ) => ReturnType<typeof parseMessagesCountTokensRequest> = parseMessagesRequest,
): string {
  const parsed = parse(body);
  if (parsed.ok) throw new Error("expected a refusal");
  expect(parsed.error.status).toBe(400);
  expect(parsed.error.body.type).toBe("error");
  expect(parsed.error.body.error.type).toBe("invalid_request_error");
  return parsed.error.body.error.message;
}

describe("parseMessagesRequest", () => {
  it("accepts a body with Claude Code's extra fields and ignores them", () => {
    const parsed = parseMessagesRequest({
      ...base,
      stream: true,
      metadata: { user_id: "u" },
      context_management: { edits: [] },
      betas: ["x"],
      system: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }],
      tools: [
        { name: "Bash", description: "run", input_schema: { type: "object" }, defer_loading: true },
        { type: "web_search_20250305", name: "web_search", max_uses: 5 },
      ],
      thinking: { type: "enabled", budget_tokens: 31999 },
    });
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.request).not.toHaveProperty("context_management");
  });

  it("accepts every block type of the reference in messages", () => {
    const content = [
      { type: "text", text: "t", citations: [] },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "d" } },
      {
        type: "tool_result",
        tool_use_id: "t1",
        content: [{ type: "text", text: "ok" }],
        is_error: true,
      },
      { type: "tool_result", tool_use_id: "t2" },
    ];
    const assistant = [
      { type: "thinking", thinking: "hm", signature: "sig" },
      { type: "redacted_thinking", data: "xyz" },
      { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } },
      { type: "server_tool_use", id: "s", name: "web_search", input: {} },
    ];
    const messages = [
      { role: "user", content },
      { role: "assistant", content: assistant },
    ];
    expect(parseMessagesRequest({ ...base, messages }).ok).toBe(true);
  });

  it("names the field path of a missing field as the API does", () => {
    const messages = [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
      { role: "user", content: "c" },
      { role: "user", content: [{ type: "tool_result", content: "x" }] },
    ];
    expect(refusal({ ...base, messages })).toBe("messages.3.content.0.tool_use_id: Field required");
    expect(refusal({ model: "m", messages: base.messages })).toBe("max_tokens: Field required");
  });

  it("refuses wrong types, out-of-range values and unknown block types, naming the field", () => {
    expect(refusal({ ...base, max_tokens: 0 })).toMatch(/^max_tokens: /);
    expect(refusal({ ...base, temperature: 1.5 })).toMatch(/^temperature: /);
    expect(refusal({ ...base, messages: [{ role: "tool", content: "x" }] })).toMatch(
      /^messages\.0\.role: /,
    );
    expect(refusal({ ...base, messages: [{ role: "user", content: 5 }] })).toMatch(
      /^messages\.0\.content: /,
    );
    expect(refusal({ ...base, messages: [{ role: "user", content: [{ type: "foo" }] }] })).toMatch(
      /^messages\.0\.content\.0\.type: /,
    );
    expect(refusal({ ...base, messages: [] })).toMatch(/^messages: /);
    expect(refusal({ ...base, tools: [{ name: "x" }] })).toBe(
      "tools.0.input_schema: Field required",
    );
    expect(refusal({ ...base, thinking: { type: "enabled", budget_tokens: 10 } })).toMatch(
      /^thinking\.budget_tokens: /,
    );
    expect(refusal({ ...base, tool_choice: { type: "tool" } })).toBe(
      "tool_choice.name: Field required",
    );
  });

  it("refuses a body that is not a JSON object", () => {
    expect(refusal([base])).toBe("request body must be a JSON object");
    expect(refusal(null)).toBe("request body must be a JSON object");
  });
});

describe("parseMessagesCountTokensRequest", () => {
  it("accepts a body without max_tokens and still checks the conversation", () => {
    const { max_tokens: _, ...body } = base;
    expect(parseMessagesCountTokensRequest(body).ok).toBe(true);
    expect(refusal({ model: "m" }, parseMessagesCountTokensRequest)).toBe(
      "messages: Field required",
    );
  });
});
