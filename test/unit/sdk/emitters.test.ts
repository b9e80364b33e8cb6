import { describe, expect, it, vi } from "vitest";
import type { SpanInput } from "../../../src/schemas/span";
import { AgentContractError } from "../../../src/sdk/contract-error";
import { runWithSpanSink, type SpanSink } from "../../../src/sdk/emitter-context";
import {
  emitAnnotation,
  emitException,
  emitMessage,
  emitObject,
  emitReward,
  heartbeat,
  operation,
} from "../../../src/sdk/emitters";

function sink(): SpanSink & { spans: SpanInput[]; beats: number } {
  const spans: SpanInput[] = [];
  const recorder = {
    spans,
    beats: 0,
    record: (span: SpanInput) => void spans.push(span),
    heartbeat: () => void recorder.beats++,
  };
  return recorder;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("emitters", () => {
  it("refuse to run outside a rollout, naming the emitter", () => {
    expect(() => emitReward(1)).toThrow(AgentContractError);
    expect(() => emitMessage("hi")).toThrow("emitMessage was called outside a rollout");
    expect(() => heartbeat()).toThrow("heartbeat was called outside a rollout");
  });

  it("record each kind of span in call order", () => {
    const recorder = sink();
    runWithSpanSink(recorder, () => {
      emitReward(0.5);
      emitMessage("thinking");
      emitObject({ hits: 3 }, { name: "search" });
      emitException(new TypeError("bad tool"));
      emitAnnotation({ difficulty: "hard" });
    });
    expect(recorder.spans.map((span) => [span.kind, span.name])).toEqual([
      ["reward", "reward"],
      ["message", "message"],
      ["object", "search"],
      ["exception", "exception"],
      ["annotation", "annotation"],
    ]);
    expect(recorder.spans[3]!.value).toMatchObject({ type: "TypeError", message: "bad tool" });
  });

  it("name the primary key of a reward record, the first key by default", () => {
    const recorder = sink();
    runWithSpanSink(recorder, () => {
      emitReward({ accuracy: 1, brevity: 0.2 }, { primaryKey: "brevity" });
      emitReward({ accuracy: 1 });
    });
    expect(recorder.spans.map((span) => span.attributes)).toEqual([
      { primary_key: "brevity" },
      { primary_key: "accuracy" },
    ]);
  });

  it("refuse a non-finite reward, an unknown primary key and a non-JSON object", () => {
    runWithSpanSink(sink(), () => {
      expect(() => emitReward(Number.NaN)).toThrow(/^emitReward: value: /);
      expect(() => emitReward({ a: Number.POSITIVE_INFINITY })).toThrow(AgentContractError);
      expect(() => emitReward({ a: 1 }, { primaryKey: "b" })).toThrow(
        'emitReward: primaryKey "b" is not one of a',
      );
      expect(() => emitObject({ when: new Date() } as never)).toThrow(AgentContractError);
    });
  });

  it("keep concurrent attempts apart through awaits, with no context argument", async () => {
    const sinks = Array.from({ length: 10 }, () => sink());
    const deep = async (value: number) => {
      await sleep(Math.random() * 10);
      emitReward(value);
    };
    await Promise.all(
      sinks.map((recorder, i) =>
        runWithSpanSink(recorder, async () => {
          await sleep(Math.random() * 10);
          await deep(i);
        }),
      ),
    );
    expect(sinks.map((recorder) => recorder.spans.map((span) => span.value))).toEqual(
      sinks.map((_, i) => [i]),
    );
  });

  it("record an operation after what it emitted, and rethrow its error", async () => {
    const recorder = sink();
    await runWithSpanSink(recorder, async () => {
      expect(await operation("lookup", async () => (emitMessage("inside"), 7))).toBe(7);
      await expect(operation("broken", () => Promise.reject(new Error("nope")))).rejects.toThrow(
        "nope",
      );
    });
    expect(recorder.spans.map((span) => [span.kind, span.name])).toEqual([
      ["message", "message"],
      ["operation", "lookup"],
      ["operation", "broken"],
    ]);
    expect(recorder.spans[1]).toMatchObject({
      value: { status: "ok" },
      start_time: expect.any(Number),
      end_time: expect.any(Number),
    });
    expect(recorder.spans[2]!.value).toEqual({ status: "error", error: "Error: nope" });
  });

  it("pass heartbeats to the attempt's watchdog", () => {
    const recorder = sink();
    const spy = vi.spyOn(recorder, "heartbeat");
    runWithSpanSink(recorder, () => heartbeat());
    expect(spy).toHaveBeenCalledOnce();
  });
});
