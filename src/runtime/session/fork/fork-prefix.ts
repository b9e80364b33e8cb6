/**
 * @module What a fork copies from its parent (steps `0..k-1` with their env snapshots, the calls
 * and spans of those steps), and how the copy is rebased onto the child's ids. Pure: unit-tested
 * without workerd.
 */
import type { LlmCall } from "../../../schemas/llm-call";
import type { Span, SpanInput } from "../../../schemas/span";
import { type Step, stepIdFor } from "../../../schemas/step";
import { decodeCall, encodeCall, type StoredCall, type StoredStep } from "../kernel";

/**
 * The attribute a span committed with a step carries: that step's index. A fork copies the spans
 * of the steps it shares and no others (stepwise rollouts store spans only with their steps).
 */
export const SPAN_STEP_ATTRIBUTE = "step_index";

/**
 * The parent's committed steps `0..k-1` (with the env snapshot after each), their calls and spans.
 * The calls travel as the session stores them, each against the one before it in the list
 * (`call-codec.ts`): whole, a k-step conversation's calls repeat its history k times, and the
 * prefix crosses one RPC per child (Durable Object RPC values are capped at 32 MiB).
 */
export interface ForkPrefix {
  /** The rollout these records belong to. */
  rollout_id: string;
  steps: StoredStep[];
  calls: StoredCall[];
  spans: Span[];
}

/** The prefix rebased onto a child: its own step and call ids, the parent's tokens, logprobs and messages. */
export interface RebasedPrefix {
  steps: StoredStep[];
  calls: LlmCall[];
  spans: SpanInput[];
}

/** A span stamped with the index of the step it was committed with, unless its emitter set that attribute. */
export function withStepIndex(span: SpanInput, stepIndex: number): SpanInput {
  const attributes = span.attributes ?? {};
  return SPAN_STEP_ATTRIBUTE in attributes
    ? span
    : { ...span, attributes: { ...attributes, [SPAN_STEP_ATTRIBUTE]: stepIndex } };
}

/** The records of the parent's first `atStep` steps (none past them: a later step's calls and spans stay the parent's). */
export function selectPrefix(
  rolloutId: string,
  atStep: number,
  records: { steps: StoredStep[]; calls: LlmCall[]; spans: Span[] },
): ForkPrefix {
  const steps = records.steps.filter(({ step }) => step.step_index < atStep);
  const stepIds = new Set(steps.map(({ step }) => step.step_id));
  const calls = records.calls.filter((call) => call.step_id !== null && stepIds.has(call.step_id));
  return {
    rollout_id: rolloutId,
    steps,
    calls: calls.map((call, i) => encodeCall(call, calls[i - 1] ?? null)),
    spans: records.spans.filter(
      (span) =>
        typeof span.attributes[SPAN_STEP_ATTRIBUTE] === "number" &&
        (span.attributes[SPAN_STEP_ATTRIBUTE] as number) < atStep,
    ),
  };
}

/**
 * The child's id for a copied call: the parent's call id with the parent's step id replaced by the
 * child's (`<child>/step/<i>/call/<same suffix>`), so ids stay unique per rollout and readable.
 */
function childCallId(call: LlmCall, parentStepId: string, childStepId: string): string {
  const prefix = `${parentStepId}/`;
  return call.call_id.startsWith(prefix)
    ? `${childStepId}/${call.call_id.slice(prefix.length)}`
    : `${childStepId}/forked/${call.call_id}`;
}

/**
 * `prefix` as the child `childId` stores it. Steps and calls get the child's ids (a step id is
 * `<rollout>/step/<i>`; commits look steps up by it) and each call names the parent's call it
 * copies (`forked_from`); token ids, logprobs, messages, observations, actions and env snapshots
 * are the parent's, unchanged. In a fork of a fork, `forked_from` names the parent's copy (the
 * record this one was copied from), so a tree is followed one hop at a time.
 */
export function rebasePrefix(prefix: ForkPrefix, childId: string): RebasedPrefix {
  const stepIds = new Map(
    prefix.steps.map(({ step }) => [step.step_id, stepIdFor(childId, step.step_index)]),
  );
  const callIds = new Map<string, string>();
  const decoded: LlmCall[] = [];
  for (const stored of prefix.calls) decoded.push(decodeCall(stored, decoded.at(-1) ?? null));
  const calls = decoded.map((call) => {
    const parentStepId = call.step_id!;
    const childStepId = stepIds.get(parentStepId)!;
    const callId = childCallId(call, parentStepId, childStepId);
    callIds.set(call.call_id, callId);
    return {
      ...call,
      call_id: callId,
      rollout_id: childId,
      step_id: childStepId,
      forked_from: call.call_id,
    };
  });
  const steps = prefix.steps.map(({ step, envSnapshot }): StoredStep => {
    const rebased: Step = {
      ...step,
      step_id: stepIds.get(step.step_id)!,
      llm_call_ids: step.llm_call_ids.map((id) => callIds.get(id) ?? id),
    };
    return { step: rebased, envSnapshot };
  });
  const spans = prefix.spans.map(
    ({ kind, name, value, attributes, start_time, end_time }): SpanInput => ({
      kind,
      name,
      value,
      attributes,
      start_time,
      end_time,
    }),
  );
  return { steps, calls, spans };
}
