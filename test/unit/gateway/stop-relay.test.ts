/** Unit: a resumable call's chunks rewritten through its stop window (first leg and continuation). */
import { describe, expect, it } from "vitest";
import { StopRelay, upstreamStopBody } from "../../../src/gateway/stop-relay";

const head = { id: "chatcmpl-1", created: 1, model: "m" };
const counts = () => ({ promptTokens: 3, completionTokens: 2 });
const chat = (
  delta: Record<string, string>,
  ids: number[],
  finish: string | null = null,
  stopReason: unknown = null,
) =>
  JSON.stringify({
    ...head,
    object: "chat.completion.chunk",
    choices: [
      {
        index: 0,
        delta,
        logprobs: null,
        finish_reason: finish,
        ...(finish ? { stop_reason: stopReason } : {}),
        token_ids: ids,
      },
    ],
  });
const text = (
  value: string,
  ids: number[],
  finish: string | null = null,
  stopReason: unknown = null,
) =>
  JSON.stringify({
    id: "cmpl-2",
    object: "text_completion",
    created: 2,
    model: "m",
    choices: [
      {
        index: 0,
        text: value,
        logprobs: { token_logprobs: ids.map(() => -0.5) },
        finish_reason: finish,
        stop_reason: stopReason,
        token_ids: ids,
      },
    ],
  });
const parsed = (out: { chat: string | null }) =>
  JSON.parse(out.chat!) as {
    id: string;
    object: string;
    choices: Array<Record<string, unknown>>;
    usage?: unknown;
  };

describe("StopRelay", () => {
  it("ends the call at a stop string the continuation completes, as a chat chunk of the first leg's id, and drops what follows", () => {
    const relay = new StopRelay({ stop: ["STOP"], includeInOutput: false, minTokens: 0 });
    expect(
      parsed(relay.rewrite(chat({ content: "Hello S" }, [1]), false, undefined, counts)).choices[0]!
        .delta,
    ).toEqual({ content: "Hell" });
    const out = relay.rewrite(text("TOP and more", [2]), true, head, counts);
    expect(out.cutShort).toBe(true);
    expect(parsed(out)).toMatchObject({
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      choices: [
        {
          delta: { content: "o " },
          finish_reason: "stop",
          stop_reason: "STOP",
          token_ids: [2],
          logprobs: { content: [{ logprob: -0.5 }] },
        },
      ],
    });
    expect(relay.rewrite(text(" later", [3]), true, head, counts).chat).toBeNull();
    expect(
      JSON.parse(relay.usageChunk(head, { promptTokens: 3, completionTokens: 2 })),
    ).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
  });

  it("lets the upstream's own stop end the call without cutting it short, and drops a stop token's text the caller did not ask for", () => {
    const relay = new StopRelay({ stop: ["Z"], includeInOutput: false, minTokens: 0 });
    expect(
      parsed(relay.rewrite(chat({ content: "ab" }, [1]), false, undefined, counts)).choices[0]!
        .delta,
    ).toEqual({ content: "ab" });
    // Upstream was asked for stop strings in the output, which also sends the text of a stop token id.
    const out = relay.rewrite(chat({ content: "\n" }, [13], "stop", 13), false, undefined, counts);
    expect(out.cutShort).toBe(false);
    expect(parsed(out).choices[0]).toMatchObject({
      delta: { content: "" },
      finish_reason: "stop",
      stop_reason: 13,
    });
  });

  it("asks upstream for the stop string in the output only when the caller did not", () => {
    const stops = { stop: ["x"], includeInOutput: false, minTokens: 0 };
    expect(upstreamStopBody({ stop: ["x"] }, stops)).toEqual({
      stop: ["x"],
      include_stop_str_in_output: true,
    });
    expect(
      upstreamStopBody(
        { stop: ["x"], include_stop_str_in_output: true },
        { ...stops, includeInOutput: true },
      ),
    ).toEqual({ stop: ["x"], include_stop_str_in_output: true });
    expect(upstreamStopBody({}, null)).toEqual({});
  });
});
