/** @module Spans a rollout emits besides its steps: rewards, messages, objects, exceptions, annotations, operations. */
import { z } from "zod";
import { JsonObject, JsonValue } from "./json";

/** Version of the persisted Span shape. */
export const SPAN_SCHEMA_VERSION = 1;

/** What a span records (Agent-lightning's emitter kinds). */
export const SpanKind = z.enum([
  "reward",
  "message",
  "object",
  "exception",
  "annotation",
  "operation",
]);
export type SpanKind = z.infer<typeof SpanKind>;

/** A reward: one number, or named numbers with the primary one named by `attributes.primary_key`. */
export const RewardValue = z.union([
  z.number().refine(Number.isFinite, "reward must be a finite number"),
  z.record(z.string(), z.number().refine(Number.isFinite, "reward values must be finite numbers")),
]);
export type RewardValue = z.infer<typeof RewardValue>;

/** A span as a caller sends it. Ordering is by the sequence id the session assigns, not by clock. */
export const SpanInput = z
  .object({
    kind: SpanKind,
    name: z.string().min(1).max(200).default("span"),
    value: JsonValue.default(null),
    attributes: JsonObject.default({}),
    start_time: z.number().nullable().default(null),
    end_time: z.number().nullable().default(null),
  })
  .strict()
  .superRefine((span, ctx) => {
    if (span.kind === "reward" && !RewardValue.safeParse(span.value).success) {
      ctx.addIssue({
        code: "custom",
        path: ["value"],
        message: "a reward span's value must be a finite number or a record of finite numbers",
      });
    }
  });
export type SpanInput = z.input<typeof SpanInput>;

/** A stored span, numbered per rollout from 1. */
export const Span = z.object({
  schema_version: z.literal(SPAN_SCHEMA_VERSION).default(SPAN_SCHEMA_VERSION),
  sequence_id: z.int().min(1),
  kind: SpanKind,
  name: z.string(),
  value: JsonValue,
  attributes: JsonObject,
  start_time: z.number().nullable(),
  end_time: z.number().nullable(),
  created_at: z.number(),
});
export type Span = z.infer<typeof Span>;

/** The primary number of a reward span: the value itself, or the entry named by `primary_key` (else the first). */
export function primaryReward(span: Pick<Span, "value" | "attributes">): number | null {
  const parsed = RewardValue.safeParse(span.value);
  if (!parsed.success) return null;
  if (typeof parsed.data === "number") return parsed.data;
  const key =
    typeof span.attributes.primary_key === "string"
      ? span.attributes.primary_key
      : Object.keys(parsed.data)[0];
  return key !== undefined ? (parsed.data[key] ?? null) : null;
}
