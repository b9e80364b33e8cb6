/** Unit: the Responses SSE stream generated from a whole chat reply, read raw and by OpenAI's own SDK. */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  type ChatReplyJson,
  chatToResponses,
  parseResponsesRequest,
  responsesEventStream,
} from "../../../../../src/gateway/apis/responses";
import { firstCall } from "./codex-like";

const request = parseResponsesRequest(firstCall());
const context = { model: "policy-under-test", callId: "call-7", request, createdAt: 1_700_000_000 };

const toolReply: ChatReplyJson = {
  choices: [
    {
      message: {
        content: "Patching.",
        reasoning_content: "edit the file",
        tool_calls: [
          { id: "c1", function: { name: "shell", arguments: '{"command":["ls"]}' } },
          { id: "c2", function: { name: "apply_patch", arguments: '{"input":"*** Begin Patch"}' } },
        ],
      },
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
};

async function readEvents(stream: ReadableStream<Uint8Array>) {
  const text = await new Response(stream).text();
  const blocks = text.split("\n\n").filter((block) => block !== "");
  const events = blocks
    .filter((block) => !block.startsWith(":"))
    .map((block) => {
      const [eventLine, dataLine] = block.split("\n");
      const data = JSON.parse(dataLine!.slice("data: ".length));
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
  return { text, events, keepalives: blocks.filter((block) => block === ": keepalive").length };
}

describe("responsesEventStream", () => {
  it("sends created and in_progress, each item's events in order, then completed, numbered from 0", async () => {
    const { events } = await readEvents(responsesEventStream(Promise.resolve(toolReply), context));
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events[0].response).toMatchObject({ status: "in_progress", output: [] });
    expect(events.at(-1).response).toEqual(chatToResponses(toolReply, context));
  });

  it("is accumulated by OpenAI's SDK into the same response the JSON answer gives", async () => {
    const client = new OpenAI({
      apiKey: "rollout-key",
      baseURL: "http://gateway.test/v1",
      fetch: async () =>
        new Response(responsesEventStream(Promise.resolve(toolReply), context), {
          headers: { "content-type": "text/event-stream" },
        }),
    });
    const stream = client.responses.stream({ model: "policy-under-test", input: "hi" });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas.join("")).toBe("Patching.");
    // The SDK adds its own `parsed` fields; everything the gateway sent must be there as sent.
    expect(final.output).toMatchObject(chatToResponses(toolReply, context).output as object[]);
    expect(final.output_text).toBe("Patching.");
  });

  it("sends keepalive comments while the reply is pending, and none after", async () => {
    const late = new Promise<ChatReplyJson>((resolve) =>
      setTimeout(
        () => resolve({ choices: [{ message: { content: "42" }, finish_reason: "stop" }] }),
        60,
      ),
    );
    const { text, keepalives } = await readEvents(
      responsesEventStream(late, { ...context, keepaliveMs: 10 }),
    );
    expect(keepalives).toBeGreaterThanOrEqual(3);
    expect(text.lastIndexOf(": keepalive")).toBeLessThan(
      text.indexOf("response.output_item.added"),
    );
  });

  it("ends with response.incomplete when the reply hit its token limit", async () => {
    const cut: ChatReplyJson = {
      choices: [{ message: { content: "par" }, finish_reason: "length" }],
    };
    const { events } = await readEvents(responsesEventStream(Promise.resolve(cut), context));
    expect(events.at(-1)).toMatchObject({
      type: "response.incomplete",
      response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } },
    });
  });

  it("sends response.failed with the error's code when the reply fails, then closes", async () => {
    const limited = Object.assign(new Error("policy is syncing, retry in 2s"), { status: 429 });
    const { events } = await readEvents(responsesEventStream(Promise.reject(limited), context));
    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.failed",
    ]);
    expect(events[2].response).toMatchObject({
      status: "failed",
      error: { code: "rate_limit_exceeded", message: "policy is syncing, retry in 2s" },
    });
    const crashed = await readEvents(
      responsesEventStream(Promise.reject(new TypeError("x is undefined")), context),
    );
    expect(crashed.events[2].response.error).toEqual({
      code: "server_error",
      message: "The server had an error while processing your request.",
    });
    const broken = await readEvents(
      responsesEventStream(Promise.resolve({ choices: [] }), context),
    );
    expect(broken.events.at(-1).response.error).toMatchObject({
      code: "server_error",
      message: expect.stringMatching(/not a chat completion/),
    });
  });

  it("stops its keepalives when the caller goes away, and ignores the reply landing later", async () => {
    let land: (reply: ChatReplyJson) => void = () => {};
    const pending = new Promise<ChatReplyJson>((resolve) => (land = resolve));
    const stream = responsesEventStream(pending, { ...context, keepaliveMs: 5 });
    const reader = stream.getReader();
    await reader.read();
    await reader.cancel();
    land(toolReply);
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
});
