/** @module A rollout turn by turn: each model call with the messages it added, its reply and tool calls, then steps' observations and rewards. */
import { html } from "hono/html";
import { messageText, type ChatMessage } from "../../../src/schemas/chat";
import type { LlmCall } from "../../../src/schemas/llm-call";
import type { RolloutView } from "../../../src/schemas/rollout-api";
import type { Span } from "../../../src/schemas/span";
import type { Step } from "../../../src/schemas/step";
import { newMessages } from "../../../src/sink/formats";
import { untrainableReason } from "../../../src/training";
import type { Html } from "../layout";
import { duration, num } from "./format";

/** Characters of one message shown before it is folded. */
const FOLD_AT = 2000;

function text(value: string): Html {
  if (value.length <= FOLD_AT) return html`${value}`;
  return html`${value.slice(0, FOLD_AT)}<details><summary>${value.length - FOLD_AT} more characters</summary>${value.slice(FOLD_AT)}</details>`;
}

/** One chat message with its tool calls. */
export function message(m: ChatMessage): Html {
  const who =
    m.role === "tool" ? `tool result${m.tool_call_id ? ` (${m.tool_call_id})` : ""}` : m.role;
  return html`<div class="msg ${m.role}" data-role="${m.role}"><strong>${who}</strong>
${m.reasoning_content ? html`<div class="muted">reasoning: ${text(m.reasoning_content)}</div>` : ""}${text(messageText(m))}
${(m.tool_calls ?? []).map((t) => html`<div class="tool-call" data-tool="${t.function.name}">→ <code>${t.function.name}(${t.function.arguments})</code> <span class="muted">${t.id}</span></div>`)}</div>`;
}

function callBlock(call: LlmCall, index: number, previous: LlmCall | undefined): Html {
  const { messages, whole } = newMessages(call, previous);
  const why = untrainableReason(call);
  return html`<div class="turn${call.excluded_from_training ? " excluded" : ""}" data-call-id="${call.call_id}" data-policy-version="${call.policy_version_start}">
<div class="muted">call ${index + 1} · policy v${call.policy_version_start}${call.policy_version_end !== call.policy_version_start ? `→v${call.policy_version_end}` : ""} · prompt ${call.usage.prompt_tokens} tok · completion ${call.usage.completion_tokens} tok · finish ${call.finish_reason ?? "–"} · ${duration(call.latency_ms)} · ${call.backend}${why ? ` · not trained: ${why}` : call.forked_from ? " · shared with the parent (context here unless the fork trains its prefix)" : " · trained"}</div>
${whole ? html`<div class="muted">(the prompt does not extend the previous call's; shown whole)</div>` : ""}
${messages.map(message)}${message(call.response_message)}</div>`;
}

function stepBlock(step: Step): Html {
  const observation = step.next_observation ?? null;
  return html`<div class="step" data-step-index="${step.step_index}"><div><strong>step ${step.step_index}</strong> · reward ${num(step.reward)} · ${step.done ? "done" : "continues"} · ${duration(step.duration_ms)}</div>
${step.action !== null ? html`<div class="muted">action <code>${JSON.stringify(step.action)}</code></div>` : ""}
${observation !== null && observation !== "" ? html`<div class="msg tool">observation: ${typeof observation === "string" ? text(observation) : html`<code>${JSON.stringify(observation)}</code>`}</div>` : ""}</div>`;
}

function attemptHeader(view: RolloutView, attempt: number): Html {
  const final = view.final_attempt === attempt;
  return html`<h3 class="attempt${final ? "" : " excluded"}" data-attempt="${attempt}">attempt ${attempt} · ${final ? "final (trains)" : "excluded: a later attempt replaced it"}</h3>`;
}

/** The conversation call by call, grouped by attempt (function agents) and followed by each step's outcome (stepwise agents). */
export function turns(view: RolloutView): Html {
  const calls = view.llm_calls;
  const byStep = new Map<string, Step>(view.trajectory.steps.map((s) => [s.step_id, s]));
  const shownSteps = new Set<string>();
  const blocks: Html[] = [];
  let attempt: number | null = null;
  calls.forEach((call, i) => {
    if (call.attempt !== null && call.attempt !== attempt)
      blocks.push(attemptHeader(view, (attempt = call.attempt)));
    blocks.push(callBlock(call, i, calls[i - 1]));
    const next = calls[i + 1];
    const step = call.step_id ? byStep.get(call.step_id) : undefined;
    if (step && next?.step_id !== call.step_id)
      (blocks.push(stepBlock(step)), shownSteps.add(step.step_id));
  });
  for (const step of view.trajectory.steps)
    if (!shownSteps.has(step.step_id)) blocks.push(stepBlock(step));
  if (view.final_messages && calls.length === 0)
    blocks.push(
      html`<div class="turn"><div class="muted">final messages (reported by the agent)</div>${view.final_messages.map(message)}</div>`,
    );
  return blocks.length > 0 ? html`${blocks}` : html`<p class="muted">No model calls yet.</p>`;
}

/** Spans in sequence order; spans of an excluded attempt are greyed. */
export function spansTable(spans: readonly Span[], finalAttempt: number | null): Html {
  if (spans.length === 0) return html`<p class="muted">No spans.</p>`;
  return html`<table class="spans"><thead><tr><th class="num">#</th><th>kind</th><th>name</th><th>value</th><th>attempt</th></tr></thead><tbody>
${spans.map((s) => {
  const attempt = typeof s.attributes.attempt === "number" ? s.attributes.attempt : null;
  const excluded = attempt !== null && finalAttempt !== null && attempt !== finalAttempt;
  return html`<tr class="${excluded ? "excluded" : ""}" data-kind="${s.kind}" style="${excluded ? "opacity:.45" : ""}"><td class="num">${s.sequence_id}</td><td>${s.kind}</td><td>${s.name}</td><td><code>${JSON.stringify(s.value).slice(0, 300)}</code></td><td>${attempt ?? ""}</td></tr>`;
})}</tbody></table>`;
}
