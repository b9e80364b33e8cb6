/**
 * The gateway's Anthropic Messages and OpenAI Responses endpoints inside workerd, against the
 * simulator: a harness conversation (a tool call, its result, the final answer) in each API, the
 * second call sent token-exactly from ids (the harness's copy of the model's turn replaced by the
 * gateway's record), and the rollout's calls merged into one training sample. Errors come in each
 * API's own shape; the rollout key works as `x-api-key`.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createExternal, openaiFor } from "../../fixtures/external-rollouts";
import { api, getRollout, waitFor } from "../../fixtures/rollouts";
import { expectOneSample } from "../fixtures/examples-fixtures";

const CALC = {
  name: "calculate",
  description: "arithmetic",
  input_schema: {
    type: "object",
    properties: { expression: { type: "string" } },
    required: ["expression"],
  },
};

function post(url: string, key: string, body: unknown): Promise<Response> {
  return exports.default.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify(body),
  });
}

/** The SSE events of a Messages stream: each `event:` name and its data. */
async function events(
  response: Response,
): Promise<Array<{ event: string; data: Record<string, any> }>> {
  const out = [];
  for (const block of (await response.text()).split("\n\n")) {
    const event = /^event: (.+)$/m.exec(block)?.[1];
    const data = /^data: (.+)$/m.exec(block)?.[1];
    if (event && data) out.push({ event, data: JSON.parse(data) });
  }
  return out;
}

async function finish(rolloutId: string): Promise<void> {
  const response = await api(`/v1/rollouts/${rolloutId}/finish`, {
    method: "POST",
    body: JSON.stringify({ reward: 1 }),
  });
  expect(response.status).toBe(200);
}

describe("the gateway speaks Anthropic Messages (integration)", () => {
  it("streams a tool call, continues token-exactly after its result, and the rollout is one sample", async () => {
    const rollout = await createExternal();
    const url = `${rollout.llm.base_url}/messages?beta=true`;
    const user = {
      role: "user",
      content: [{ type: "text", text: "What is 17 * 23?", cache_control: { type: "ephemeral" } }],
    };
    const first = await post(url, rollout.llm.api_key, {
      model: "claude-sonnet-4-5",
      max_tokens: 512,
      system: [
        { type: "text", text: "You are a calculator.", cache_control: { type: "ephemeral" } },
      ],
      tools: [CALC],
      messages: [user],
      stream: true,
    });
    expect(first.status).toBe(200);
    const stream = await events(first);
    expect(stream[0]!.event).toBe("message_start");
    expect(stream.at(-1)!.event).toBe("message_stop");
    const toolUse = stream.find(
      (e) => e.event === "content_block_start" && e.data.content_block.type === "tool_use",
    )!;
    const input = stream
      .filter((e) => e.event === "content_block_delta" && e.data.delta.type === "input_json_delta")
      .map((e) => e.data.delta.partial_json)
      .join("");
    expect(stream.find((e) => e.event === "message_delta")!.data.delta.stop_reason).toBe(
      "tool_use",
    );
    const assistant = {
      role: "assistant",
      content: [
        {
          type: "tool_use",
          id: toolUse.data.content_block.id,
          name: "calculate",
          input: JSON.parse(input),
        },
      ],
    };
    // The next call: the harness moved cache_control and re-sent the model's turn as it saw it.
    const second = await post(url, rollout.llm.api_key, {
      model: "claude-sonnet-4-5",
      max_tokens: 512,
      system: [{ type: "text", text: "You are a calculator." }],
      tools: [CALC],
      messages: [
        { role: "user", content: "What is 17 * 23?" },
        assistant,
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: toolUse.data.content_block.id,
              content: "391",
              cache_control: { type: "ephemeral" },
            },
          ],
        },
      ],
    });
    expect(second.status).toBe(200);
    const reply = (await second.json()) as {
      type: string;
      stop_reason: string;
      content: Array<{ type: string }>;
    };
    expect(reply.type).toBe("message");
    expect(reply.stop_reason).toBe("end_turn");
    await finish(rollout.rollout_id);
    const view = await getRollout(rollout.rollout_id);
    expect(view.llm_calls.map((call) => call.continuation)).toEqual([
      { token_exact: false, reason: "first call" },
      { token_exact: true, via: "tool_call_ids" },
    ]);
    await expectOneSample(view);
  });

  it("answers a malformed body with Anthropic's error shape naming the field, and a missing key with 401", async () => {
    const rollout = await createExternal();
    const url = `${rollout.llm.base_url}/messages`;
    const bad = await post(url, rollout.llm.api_key, { model: "m", messages: [] });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toMatch(/max_tokens/);
    const anonymous = await exports.default.fetch(url, { method: "POST", body: "{not json" });
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { type: string } }).error.type).toBe(
      "authentication_error",
    );
  });
});

describe("the gateway's harness routes (integration)", () => {
  it("counts a Messages request's tokens on the backend and notes the count on the rollout", async () => {
    const rollout = await createExternal();
    const response = await post(
      `${rollout.llm.base_url}/messages/count_tokens`,
      rollout.llm.api_key,
      {
        model: "claude-haiku",
        messages: [{ role: "user", content: "What is 17 * 23?" }],
        tools: [CALC],
      },
    );
    expect(response.status).toBe(200);
    const { input_tokens } = (await response.json()) as { input_tokens: number };
    expect(input_tokens).toBeGreaterThan(10);
    const view = await waitFor("the count_tokens span", async () => {
      const read = await getRollout(rollout.rollout_id);
      return read.spans.some((span) => span.name === "count_tokens") ? read : undefined;
    });
    expect(view.llm_calls).toEqual([]);
  });

  it("answers every gateway route without a key with 401 before it reads a malformed body", async () => {
    const rollout = await createExternal();
    for (const path of [
      "chat/completions",
      "completions",
      "messages",
      "messages/count_tokens",
      "responses",
    ]) {
      const response = await exports.default.fetch(`${rollout.llm.base_url}/${path}`, {
        method: "POST",
        body: "{not json",
      });
      expect(response.status, path).toBe(401);
    }
  });
});

describe("the gateway speaks OpenAI Responses (integration)", () => {
  it("runs a function call and its output through the real openai client, streamed, as one sample", async () => {
    const rollout = await createExternal();
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const tools = [
      {
        type: "function" as const,
        name: "calculate",
        description: "arithmetic",
        parameters: CALC.input_schema,
        strict: false,
      },
    ];
    const input = [{ role: "user" as const, content: "What is 17 * 23?" }];
    const stream = await client.responses.create({
      model: "gpt-5-codex",
      input,
      tools,
      stream: true,
      store: false,
    });
    let completed: any = null;
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.completed") completed = event.response;
    }
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.function_call_arguments.done");
    const call = completed.output.find((item: { type: string }) => item.type === "function_call");
    const second = await client.responses.create({
      model: "gpt-5-codex",
      tools,
      store: false,
      input: [
        ...input,
        ...completed.output,
        { type: "function_call_output", call_id: call.call_id, output: "391" },
      ],
    });
    expect(second.status).toBe("completed");
    expect(second.output_text).not.toBe("");
    await finish(rollout.rollout_id);
    const view = await getRollout(rollout.rollout_id);
    expect(view.llm_calls.map((c) => c.continuation)).toEqual([
      { token_exact: false, reason: "first call" },
      { token_exact: true, via: "call_ref" },
    ]);
    await expectOneSample(view);
  });

  it("refuses previous_response_id with OpenAI's error shape naming the parameter", async () => {
    const rollout = await createExternal();
    const response = await exports.default.fetch(`${rollout.llm.base_url}/responses`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${rollout.llm.api_key}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ model: "m", input: "hi", previous_response_id: "resp_1" }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; param: string } };
    expect(body.error).toMatchObject({
      type: "invalid_request_error",
      param: "previous_response_id",
    });
  });
});
