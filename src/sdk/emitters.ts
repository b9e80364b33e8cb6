/**
 * @module Emitters (Agent-lightning's `emit_*`): record spans on the current rollout from anywhere
 * in the agent's call tree, without passing a context.
 */
import type { JsonObject, JsonValue } from "../schemas/json";
import { SpanInput, type SpanKind } from "../schemas/span";
import { AgentContractError } from "./contract-error";
import { currentSpanSink } from "./emitter-context";

/** Extra attributes of a span (JSON). */
export type SpanAttributes = Record<string, JsonValue>;

function emit(
  caller: string,
  kind: SpanKind,
  name: string,
  value: unknown,
  attributes: SpanAttributes = {},
  times: { start_time?: number; end_time?: number } = {},
): void {
  const sink = currentSpanSink(caller);
  const parsed = SpanInput.safeParse({ kind, name, value, attributes, ...times });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AgentContractError(
      `${caller}: ${issue?.path.join(".") || "span"}: ${issue?.message ?? "invalid"}`,
    );
  }
  sink.record(parsed.data);
}

/**
 * Records a reward: one finite number, or named finite numbers with the primary one named by
 * `primaryKey` (default: the first key). Unless the agent returns its own, the rollout's reward is
 * the primary value of the last reward emitted in the attempt that succeeded.
 *
 * @example
 * emitReward(1);
 * emitReward({ accuracy: 1, brevity: 0.4 }, { primaryKey: "accuracy" });
 */
export function emitReward(
  reward: number | Record<string, number>,
  options: { primaryKey?: string; name?: string; attributes?: SpanAttributes } = {},
): void {
  const attributes: SpanAttributes = { ...options.attributes };
  if (typeof reward === "object" && reward !== null) {
    const keys = Object.keys(reward);
    if (keys.length === 0)
      throw new AgentContractError("emitReward: a reward record needs at least one entry");
    if (options.primaryKey !== undefined && !keys.includes(options.primaryKey))
      throw new AgentContractError(
        `emitReward: primaryKey "${options.primaryKey}" is not one of ${keys.join(", ")}`,
      );
    attributes.primary_key = options.primaryKey ?? keys[0]!;
  }
  emit("emitReward", "reward", options.name ?? "reward", reward, attributes);
}

/**
 * Records a message (a log line of the agent).
 *
 * @example
 * emitMessage("retrieved 3 documents");
 */
export function emitMessage(message: string, attributes?: SpanAttributes): void {
  emit("emitMessage", "message", "message", message, attributes);
}

/**
 * Records any JSON value (a tool result, a parsed answer).
 *
 * @example
 * emitObject({ tool: "search", hits: 3 });
 */
export function emitObject(
  value: JsonValue,
  options: { name?: string; attributes?: SpanAttributes } = {},
): void {
  emit("emitObject", "object", options.name ?? "object", value, options.attributes);
}

/**
 * Records an error the agent caught and carried on from.
 *
 * @example
 * try { await tool() } catch (error) { emitException(error) }
 */
export function emitException(error: unknown, attributes?: SpanAttributes): void {
  const value: JsonObject =
    error instanceof Error
      ? { type: error.name, message: error.message, stack: error.stack ?? null }
      : { type: typeof error, message: String(error), stack: null };
  emit("emitException", "exception", "exception", value, attributes);
}

/**
 * Records an annotation (labels, metadata about the rollout).
 *
 * @example
 * emitAnnotation({ difficulty: "hard" });
 */
export function emitAnnotation(
  annotation: Record<string, JsonValue>,
  attributes?: SpanAttributes,
): void {
  emit("emitAnnotation", "annotation", "annotation", annotation, attributes);
}

/**
 * Runs `fn` as a named operation and records it when it ends, with its start and end time and
 * whether it threw (the error is rethrown). Spans `fn` emits come first: sequence order, not clock.
 *
 * @example
 * const docs = await operation("retrieve", () => search(query));
 */
export async function operation<T>(
  name: string,
  fn: () => T | Promise<T>,
  attributes?: SpanAttributes,
): Promise<T> {
  currentSpanSink("operation");
  const start = Date.now();
  try {
    const result = await fn();
    emit("operation", "operation", name, { status: "ok" }, attributes, {
      start_time: start,
      end_time: Date.now(),
    });
    return result;
  } catch (error) {
    emit(
      "operation",
      "operation",
      name,
      {
        status: "error",
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      },
      attributes,
      { start_time: start, end_time: Date.now() },
    );
    throw error;
  }
}

/**
 * Tells the attempt's watchdog the agent is alive: an attempt with no model call, span or heartbeat
 * for `step_timeout_ms` is given up and retried. Call it from long tool runs.
 *
 * @example
 * for (const file of files) { heartbeat(); await index(file); }
 */
export function heartbeat(): void {
  currentSpanSink("heartbeat").heartbeat();
}
