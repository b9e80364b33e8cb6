/** Integration: `GET /v1/rollouts/:id/otlp` exports a rollout's spans in OpenTelemetry's OTLP/JSON shape. */
import { describe, expect, it } from "vitest";
import type { OtlpSpan, OtlpTraceExport } from "../../../src/sink/formats/otlp-trace";
import "../../fixtures/authoring-agents";
import { api, runRollout, uniqueId } from "../../fixtures/rollouts";

async function exportOf(rolloutId: string): Promise<OtlpTraceExport> {
  const response = await api(`/v1/rollouts/${rolloutId}/otlp`);
  expect(response.status).toBe(200);
  return (await response.json()) as OtlpTraceExport;
}

function attr(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((attribute) => attribute.key === key)?.value as
    Record<string, unknown> | undefined;
  return value ? Object.values(value)[0] : undefined;
}

/** One trace, hex ids of OTLP's sizes, one root, every parent a span of the trace, start <= end. */
function expectWellFormed(spans: OtlpSpan[]): void {
  expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
  expect(
    spans.every(
      (span) => /^[0-9a-f]{32}$/.test(span.traceId) && /^[0-9a-f]{16}$/.test(span.spanId),
    ),
  ).toBe(true);
  const ids = new Set(spans.map((span) => span.spanId));
  expect(ids.size).toBe(spans.length);
  expect(spans.filter((span) => span.parentSpanId === "").map((span) => span.name)).toEqual([
    "rollout",
  ]);
  expect(spans.every((span) => span.parentSpanId === "" || ids.has(span.parentSpanId))).toBe(true);
  expect(
    spans.every((span) => BigInt(span.startTimeUnixNano) <= BigInt(span.endTimeUnixNano)),
  ).toBe(true);
}

describe("OTLP span export (integration)", () => {
  it("exports an attempt agent's calls and emitted spans as one trace, Agent-lightning's span names under the attempt", async () => {
    const view = await runRollout({
      agent: "authoring-fn-emit",
      rollout_id: uniqueId("otlp-fn"),
      task: { problem: "Say hi.", extra_args: { reward: 0.75 } },
    });
    const document = await exportOf(view.rollout_id);
    const [resource] = document.resourceSpans;
    expect(resource!.resource.attributes).toContainEqual({
      key: "service.name",
      value: { stringValue: "edge-rollout" },
    });
    const spans = resource!.scopeSpans[0]!.spans;
    expectWellFormed(spans);
    const root = spans.find((span) => span.name === "rollout")!;
    expect(root.startTimeUnixNano).toBe(`${view.created_at}000000`);
    expect(root.status.code).toBe(1);
    const attempt = spans.find((span) => span.name === "attempt")!;
    expect(attempt.parentSpanId).toBe(root.spanId);
    const chat = spans.find((span) => span.name === "chat")!;
    expect(chat).toMatchObject({ kind: 3, parentSpanId: attempt.spanId });
    expect(attr(chat, "gen_ai.usage.output_tokens")).toBe(
      String(view.llm_calls[0]!.usage.completion_tokens),
    );
    const reward = spans.find((span) => span.name === "agentlightning.reward")!;
    expect(reward.parentSpanId).toBe(attempt.spanId);
    expect(attr(reward, "agentlightning.reward.primary")).toBe(0.75);
    expect(attr(reward, "agentlightning.reward.score")).toBe(0.75);
  });

  it("puts a stepwise rollout's model calls under their steps and gives the same ids when exported again", async () => {
    const view = await runRollout({
      agent: "calculator",
      rollout_id: uniqueId("otlp-step"),
      task: { problem: "What is 17 + 25?", ground_truth: "42" },
    });
    const spans = (await exportOf(view.rollout_id)).resourceSpans[0]!.scopeSpans[0]!.spans;
    expectWellFormed(spans);
    const steps = spans.filter((span) => span.name === "step");
    expect(steps).toHaveLength(view.trajectory.steps.length);
    const chats = spans.filter((span) => span.name === "chat");
    expect(chats).toHaveLength(view.llm_calls.length);
    expect(chats.every((chat) => steps.some((step) => step.spanId === chat.parentSpanId))).toBe(
      true,
    );
    const again = (await exportOf(view.rollout_id)).resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(again.map((span) => span.spanId)).toEqual(spans.map((span) => span.spanId));
  });

  it("answers 404 problem+json for a rollout that does not exist", async () => {
    const response = await api(`/v1/rollouts/${uniqueId("otlp-none")}/otlp`);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
  });
});
