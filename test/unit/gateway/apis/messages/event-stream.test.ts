import { afterEach, describe, expect, it, vi } from "vitest";
import { chatToMessages, messagesEventStream } from "../../../../../src/gateway/apis/messages";

const context = { model: "claude-x", callId: "c1", keepaliveMs: 5000 };
const reply = {
  choices: [
    {
      message: {
        role: "assistant",
        reasoning_content: "think",
        content: "hello",
        tool_calls: [
          { id: "t1", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
        ],
      },
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
};

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

/** The `event:`/`data:` pairs of an SSE text, comments skipped. */
function events(text: string): Array<{ event: string; data: any }> {
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("event: "))
    .map((frame) => {
      const [eventLine, dataLine] = frame.split("\n");
      return { event: eventLine!.slice(7), data: JSON.parse(dataLine!.slice(6)) };
    });
}

afterEach(() => vi.useRealTimers());

describe("messagesEventStream", () => {
  it("sends the API's event sequence, from which the same message rebuilds", async () => {
    const got = events(await readAll(messagesEventStream(Promise.resolve(reply), context)));
    expect(got.map((e) => e.event)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(got[0]!.data.message).toMatchObject({
      id: "msg_c1",
      content: [],
      stop_reason: null,
      usage: { input_tokens: 7 },
    });
    expect(got[3]!.data.delta).toEqual({ type: "thinking_delta", thinking: "think" });
    expect(got[4]!.data.delta.type).toBe("signature_delta");
    expect(got[9]!.data.content_block).toEqual({
      type: "tool_use",
      id: "t1",
      name: "Bash",
      input: {},
    });
    expect(got[10]!.data.delta).toEqual({
      type: "input_json_delta",
      partial_json: '{"command":"ls"}',
    });
    expect(got[12]!.data).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: 3 },
    });
    expect(rebuild(got)).toEqual(chatToMessages(reply, context));
  });

  it("splits a long text into a few deltas that concatenate to it", async () => {
    const text = "🎉".repeat(3000);
    const long = { choices: [{ message: { content: text }, finish_reason: "stop" }] };
    const got = events(await readAll(messagesEventStream(Promise.resolve(long), context)));
    const deltas = got
      .filter((e) => e.event === "content_block_delta")
      .map((e) => e.data.delta.text as string);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(text);
  });

  it("sends keepalive comments while the reply is pending", async () => {
    vi.useFakeTimers();
    let resolve!: (value: typeof reply) => void;
    const stream = messagesEventStream(new Promise((r) => (resolve = r)), context);
    const text = readAll(stream);
    await vi.advanceTimersByTimeAsync(12_000);
    resolve(reply);
    const all = await text;
    expect(all.startsWith(": keepalive\n\n: keepalive\n\nevent: message_start")).toBe(true);
  });

  it("sends one error event, in the API's shape, when the reply fails", async () => {
    const failed = Promise.reject(
      Object.assign(new Error("weights are being synced"), { status: 429 }),
    );
    expect(await readAll(messagesEventStream(failed, context))).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"weights are being synced"}}\n\n',
    );
    const unusable = events(
      await readAll(messagesEventStream(Promise.resolve({ choices: [] }), context)),
    );
    expect(unusable.map((e) => [e.event, e.data.error.type])).toEqual([["error", "api_error"]]);
  });

  it("stops its keepalives when the harness goes away, the failure still handled", async () => {
    vi.useFakeTimers();
    let reject!: (error: unknown) => void;
    const stream = messagesEventStream(new Promise((_, r) => (reject = r)), context);
    await stream.cancel();
    reject(new Error("late"));
    await vi.advanceTimersByTimeAsync(20_000);
    expect(vi.getTimerCount()).toBe(0);
  });
});

/** The message an SDK accumulates from the events (as the Anthropic SDKs' stream helpers do). */
function rebuild(got: Array<{ event: string; data: any }>) {
  const message = structuredClone(got[0]!.data.message);
  const json: string[] = [];
  for (const { data } of got) {
    if (data.type === "content_block_start") {
      message.content[data.index] = structuredClone(data.content_block);
      json[data.index] = "";
    }
    if (data.type === "content_block_delta") {
      const block = message.content[data.index];
      const d = data.delta;
      if (d.type === "text_delta") block.text += d.text;
      if (d.type === "thinking_delta") block.thinking += d.thinking;
      if (d.type === "signature_delta") block.signature += d.signature;
      if (d.type === "input_json_delta") json[data.index] += d.partial_json;
    }
    if (data.type === "content_block_stop" && message.content[data.index].type === "tool_use")
      message.content[data.index].input = JSON.parse(json[data.index]!);
    if (data.type === "message_delta") {
      Object.assign(message, data.delta);
      message.usage.output_tokens = data.usage.output_tokens;
    }
  }
  return message;
}
