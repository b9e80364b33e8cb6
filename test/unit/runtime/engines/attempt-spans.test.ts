import { describe, expect, it } from "vitest";
import { AttemptSpans, SPAN_FLUSH_AT } from "../../../../src/runtime/engines/attempt-spans";
import type { SpanInput } from "../../../../src/schemas/span";

function fakeSession(delayMs = 0) {
  const batches: SpanInput[][] = [];
  return {
    batches,
    addEvents: async (events: SpanInput[]) => {
      // Later batches answer sooner, so only the chain keeps them in order.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, delayMs - batches.length)));
      batches.push(events);
      return { ok: true as const, spans: [] };
    },
  };
}

describe("AttemptSpans", () => {
  it("tags spans with the attempt and sends them in emission order, batch after batch", async () => {
    const session = fakeSession(5);
    const spans = new AttemptSpans(session, 2, () => undefined);
    for (let i = 0; i < SPAN_FLUSH_AT * 2 + 3; i++)
      spans.record({ kind: "message", value: `m${i}` });
    await spans.flush();
    const sent = session.batches.flat();
    expect(session.batches.map((batch) => batch.length)).toEqual([SPAN_FLUSH_AT, SPAN_FLUSH_AT, 3]);
    expect(sent.map((span) => span.value)).toEqual(
      Array.from({ length: SPAN_FLUSH_AT * 2 + 3 }, (_, i) => `m${i}`),
    );
    expect(sent.every((span) => span.attributes?.attempt === 2)).toBe(true);
  });

  it("keeps the primary value of the last reward", () => {
    const spans = new AttemptSpans(fakeSession(), 1, () => undefined);
    expect(spans.lastReward).toBeNull();
    spans.record({ kind: "reward", value: 0.2 });
    spans.record({ kind: "reward", value: { a: 0.1, b: 0.9 }, attributes: { primary_key: "b" } });
    expect(spans.lastReward).toBe(0.9);
  });

  it("counts each span and heartbeat as activity, and drops both once closed", async () => {
    let activity = 0;
    const session = fakeSession();
    const spans = new AttemptSpans(session, 1, () => void activity++);
    spans.record({ kind: "message", value: "a" });
    spans.heartbeat();
    spans.close();
    spans.record({ kind: "message", value: "late" });
    spans.append({ kind: "reward", value: 1 });
    spans.heartbeat();
    await spans.flush();
    expect(activity).toBe(2);
    expect(session.batches.flat().map((span) => span.value)).toEqual(["a"]);
    expect(spans.lastReward).toBeNull();
  });

  it("rethrows a failed send at flush", async () => {
    const spans = new AttemptSpans(
      { addEvents: () => Promise.reject(new Error("rpc down")) },
      1,
      () => undefined,
    );
    spans.record({ kind: "message", value: "a" });
    await expect(spans.flush()).rejects.toThrow("rpc down");
  });
});
