/**
 * @module A rollout as an OpenTelemetry trace in OTLP/JSON (`ExportTraceServiceRequest`), so an OTLP
 * collector can ingest its spans: POST the document to the collector's `/v1/traces` unchanged.
 */
import type { RolloutView } from "../../schemas/rollout-api";
import type { JsonValue } from "../../schemas/json";
import { primaryReward, type Span } from "../../schemas/span";

/** An OTLP/JSON attribute value (`AnyValue`): 64-bit integers are strings, as proto3's JSON mapping writes them. */
export type OtlpValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: OtlpValue[] } };

/** One `KeyValue`. */
export interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

/** One OTLP span: ids in lowercase hex (OTLP/JSON's encoding), times in Unix nanoseconds as strings. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  /** Empty for the root span. */
  parentSpanId: string;
  name: string;
  /** 1 INTERNAL, 3 CLIENT (a model call). */
  kind: 1 | 3;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  /** 0 UNSET, 1 OK, 2 ERROR. */
  status: { code: 0 | 1 | 2; message?: string };
}

/** The document `POST /v1/traces` of an OTLP/HTTP collector takes. */
export interface OtlpTraceExport {
  resourceSpans: Array<{
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: Array<{ scope: { name: string; version: string }; spans: OtlpSpan[] }>;
  }>;
}

/** The instrumentation scope the spans are reported under. */
export const OTLP_SCOPE = { name: "edge-rollout", version: "1" } as const;

/** One attribute value; objects and mixed arrays become their JSON text (OTLP attributes are flat). */
function otlpValue(value: JsonValue): OtlpValue {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number")
    return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (
    Array.isArray(value) &&
    value.every(
      (item) => typeof item === "string" || typeof item === "number" || typeof item === "boolean",
    )
  )
    return { arrayValue: { values: value.map(otlpValue) } };
  return { stringValue: JSON.stringify(value) };
}

/** Attributes from a record; null and undefined values are left out (OTLP has no null). */
function attributes(record: Record<string, JsonValue | undefined>): OtlpAttribute[] {
  return Object.entries(record)
    .filter((entry): entry is [string, JsonValue] => entry[1] !== null && entry[1] !== undefined)
    .map(([key, value]) => ({ key, value: otlpValue(value) }));
}

/** Milliseconds since the epoch as Unix nanoseconds, exactly (a string: the value exceeds 2^53). */
function nanos(ms: number): string {
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString();
}

async function hexDigest(text: string, bytes: number): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return [...digest.subarray(0, bytes)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Ids derived from the rollout id: exporting the same rollout twice yields the same trace and span
 * ids, so a collector that receives it twice deduplicates instead of showing two traces.
 */
function idsFor(rolloutId: string) {
  return {
    trace: () => hexDigest(`trace:${rolloutId}`, 16),
    span: (local: string) => hexDigest(`span:${rolloutId}:${local}`, 8),
  };
}

/** Agent-lightning's attributes for one of its span kinds (`agentlightning.reward.primary`, `agentlightning.message.text`, …). */
function emitterAttributes(span: Span): Record<string, JsonValue> {
  switch (span.kind) {
    case "reward": {
      const named =
        typeof span.value === "object" && span.value !== null && !Array.isArray(span.value)
          ? Object.fromEntries(
              Object.entries(span.value).map(([key, value]) => [
                `agentlightning.reward.${key}`,
                value,
              ]),
            )
          : {};
      return { ...named, "agentlightning.reward.primary": primaryReward(span) };
    }
    case "message":
      return {
        "agentlightning.message.text":
          typeof span.value === "string" ? span.value : JSON.stringify(span.value),
      };
    case "exception": {
      const value =
        typeof span.value === "object" && span.value !== null && !Array.isArray(span.value)
          ? span.value
          : {};
      return {
        "exception.type": (value.type as JsonValue) ?? span.name,
        "exception.message": (value.message as JsonValue) ?? JSON.stringify(span.value),
      };
    }
    default:
      return { [`agentlightning.${span.kind}.value`]: JSON.stringify(span.value) };
  }
}

/**
 * The rollout as one trace: a root `rollout` span; under it one span per attempt (attempt agents),
 * one per committed step (stepwise agents), one `chat` CLIENT span per model call (under its step
 * or attempt, with OpenTelemetry's `gen_ai.*` attributes) and one span per emitted span, named as
 * Agent-lightning names them (`agentlightning.reward`, …), under its attempt.
 */
export async function rolloutTrace(view: RolloutView): Promise<OtlpTraceExport> {
  const ids = idsFor(view.rollout_id);
  const traceId = await ids.trace();
  const rootId = await ids.span("rollout");
  const end = view.finished_at ?? view.updated_at;
  const spans: OtlpSpan[] = [];
  const push = async (
    local: string,
    parentSpanId: string,
    fields: Omit<OtlpSpan, "traceId" | "spanId" | "parentSpanId">,
  ) => {
    spans.push({ traceId, spanId: await ids.span(local), parentSpanId, ...fields });
  };
  const failed = view.status === "failed";
  spans.push({
    traceId,
    spanId: rootId,
    parentSpanId: "",
    name: "rollout",
    kind: 1,
    startTimeUnixNano: nanos(view.created_at),
    endTimeUnixNano: nanos(end),
    attributes: attributes({
      "agentlightning.rollout_id": view.rollout_id,
      "edge_rollout.agent": view.agent,
      "edge_rollout.status": view.status,
      "edge_rollout.termination_reason": view.termination_reason,
      "agentlightning.reward.primary": view.reward,
      "edge_rollout.mode": view.config.mode,
    }),
    status: failed
      ? { code: 2, message: view.error ?? view.termination_reason ?? "failed" }
      : { code: view.status === "succeeded" ? 1 : 0 },
  });
  const attemptParent = new Map<number, string>();
  for (let attempt = 1; attempt <= view.attempts; attempt++) {
    const calls = view.llm_calls.filter((call) => call.attempt === attempt);
    const times = [
      ...calls.map((call) => call.created_at),
      ...view.spans
        .filter((span) => span.attributes.attempt === attempt)
        .map((span) => span.created_at),
    ];
    const start = times.length > 0 ? Math.min(...times) : view.created_at;
    const local = `attempt/${attempt}`;
    await push(local, rootId, {
      name: "attempt",
      kind: 1,
      startTimeUnixNano: nanos(start),
      endTimeUnixNano: nanos(
        Math.max(start, ...calls.map((call) => call.created_at + call.latency_ms), ...times),
      ),
      attributes: attributes({
        "agentlightning.attempt_id": `${view.rollout_id}/attempt/${attempt}`,
        "edge_rollout.attempt": attempt,
        "edge_rollout.final": attempt === view.final_attempt,
      }),
      status: { code: 0 },
    });
    attemptParent.set(attempt, await ids.span(local));
  }
  const callParent = new Map<string, string>();
  for (const step of view.trajectory.steps) {
    const local = `step/${step.step_index}`;
    await push(local, rootId, {
      name: "step",
      kind: 1,
      startTimeUnixNano: nanos(step.started_at),
      endTimeUnixNano: nanos(step.started_at + step.duration_ms),
      attributes: attributes({
        "edge_rollout.step_index": step.step_index,
        "edge_rollout.step.reward": step.reward,
        "edge_rollout.step.done": step.done,
        "edge_rollout.step.mc_return": step.mc_return,
      }),
      status: { code: 0 },
    });
    // Attempt agents' steps are read off their calls: those calls stay under their attempt.
    if (step.info.derived_from !== "llm_call")
      for (const callId of step.llm_call_ids) callParent.set(callId, await ids.span(local));
  }
  for (const call of view.llm_calls) {
    const parent =
      callParent.get(call.call_id) ??
      (call.attempt !== null ? attemptParent.get(call.attempt) : undefined) ??
      rootId;
    await push(`call/${call.call_id}`, parent, {
      name: "chat",
      kind: 3,
      startTimeUnixNano: nanos(call.created_at),
      endTimeUnixNano: nanos(call.created_at + call.latency_ms),
      attributes: attributes({
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": typeof call.request.model === "string" ? call.request.model : null,
        "gen_ai.usage.input_tokens": call.usage.prompt_tokens,
        "gen_ai.usage.output_tokens": call.usage.completion_tokens,
        "gen_ai.response.finish_reasons": call.finish_reason === null ? null : [call.finish_reason],
        "edge_rollout.call_id": call.call_id,
        "edge_rollout.purpose": call.purpose,
        "edge_rollout.excluded_from_training": call.excluded_from_training,
        "edge_rollout.policy_version": call.policy_version_start,
      }),
      status: { code: 0 },
    });
  }
  for (const span of view.spans) {
    const attempt = typeof span.attributes.attempt === "number" ? span.attributes.attempt : null;
    const start = span.start_time ?? span.created_at;
    await push(
      `span/${span.sequence_id}`,
      (attempt !== null ? attemptParent.get(attempt) : undefined) ?? rootId,
      {
        name: `agentlightning.${span.kind}`,
        kind: 1,
        startTimeUnixNano: nanos(start),
        endTimeUnixNano: nanos(span.end_time ?? start),
        attributes: attributes({
          ...span.attributes,
          ...emitterAttributes(span),
          "edge_rollout.span_name": span.name,
          "agentlightning.span_sequence_id": span.sequence_id,
        }),
        status: span.kind === "exception" ? { code: 2, message: span.name } : { code: 0 },
      },
    );
  }
  return {
    resourceSpans: [
      {
        resource: {
          attributes: attributes({
            "service.name": "edge-rollout",
            "agentlightning.rollout_id": view.rollout_id,
          }),
        },
        scopeSpans: [{ scope: { ...OTLP_SCOPE }, spans }],
      },
    ],
  };
}
