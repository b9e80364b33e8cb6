/**
 * @module The token strip of one training sample: every response token as an element with
 * `data-id`, `data-mask="0|1"` and `data-logprob`, coloured by mask, each call's completion marked
 * with its policy version, drift splits and truncation marked. The mask and logprobs shown are the
 * sample's own arrays (built by the sink's sample builder), never re-derived here. A model token
 * shows the engine's own text of it (the call's `completion_token_strs`, vLLM's logprob `token`
 * strings) and carries it whole in `data-token-text`; context tokens (prompt, tool results,
 * template glue), whose text the engine never sends with a call, show the text the server gives
 * for the ids of the sample's last call's prompt (`contextTexts`), or their ids when it gave none.
 * The prompt's tokens sit in `.prompt-strip`, apart from the response's `.strip`. Special tokens (`<|im_end|>`, `<think>`, `<tool_call>`, …) get class
 * `special`; a token holding only part of a UTF-8 character (its text is U+FFFD, as vLLM shows it)
 * gets class `bytes` and says so on hover.
 */
import { html, raw } from "hono/html";
import type { LlmCall } from "../../../src/schemas/llm-call";
import type { TrainingSample } from "../../../src/schemas/training-sample";
import { maskTotals } from "../../../src/training";
import type { PromptTexts } from "../context-texts";
import type { Html } from "../layout";
import { num } from "./format";

function escapeAttr(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/"/g, "&quot;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
}

/** A token's text made visible: whitespace as the symbols editors use for it. */
function visible(text: string): string {
  return escapeAttr(text).replace(/ /g, "\u00b7").replace(/\n/g, "\u21b5").replace(/\t/g, "\u2192");
}

/** Chat-template control tokens (`<|…|>`) and the tags Qwen-style templates add as single tokens. */
const SPECIAL = /^(<\|[^|\s]+\|>|<\/?(think|tool_call|tool_response)>)$/;

/** The class of a token with engine text: `special`, `bytes` (part of a UTF-8 character), or none. */
export function tokenClass(text: string): string {
  if (SPECIAL.test(text)) return "t special";
  return text.includes("\uFFFD") ? "t bytes" : "t";
}

/**
 * The tokens `[from, to)` of the sample's response as one string of spans. Built as a raw string:
 * thousands of tiny template results would cost far more than the tokens themselves.
 */
function tokens(
  sample: TrainingSample,
  from: number,
  to: number,
  callLabel: string,
  texts?: readonly (string | undefined)[],
): string {
  let out = "";
  for (let i = from; i < to; i++) {
    const id = sample.response_ids[i]!;
    const mask = sample.response_mask[i]!;
    const logprob = sample.response_logprobs[i]!;
    const text = texts?.[i - from];
    const shown = text === undefined || text === "" ? String(id) : visible(text);
    const bytes = text?.includes("\uFFFD") ? " · part of a UTF-8 character (bytes)" : "";
    const title =
      mask === 1
        ? `token ${id}${text ? ` ${JSON.stringify(text)}` : ""}${bytes} · logprob ${logprob.toFixed(4)} · ${callLabel}`
        : `token ${id}${text ? ` ${JSON.stringify(text)}` : ""}${bytes} · context (mask 0)`;
    const textAttr = text === undefined ? "" : ` data-token-text="${escapeAttr(text)}"`;
    out += `<span class="${text === undefined ? "t" : tokenClass(text)}" data-i="${i}" data-id="${id}" data-mask="${mask}" data-logprob="${logprob}"${textAttr} title="${escapeAttr(title)}">${shown}</span>`;
  }
  return out;
}

/** The prompt's tokens (not trained), each with its text when the server gave it. */
function promptTokens(sample: TrainingSample, context: ContextText): string {
  let out = "";
  sample.prompt_ids.forEach((id, k) => {
    const text = context(k, id);
    const shown = text === undefined || text === "" ? String(id) : visible(text);
    const textAttr = text === undefined ? "" : ` data-token-text="${escapeAttr(text)}"`;
    const title = `token ${id}${text ? ` ${JSON.stringify(text)}` : ""} · prompt (not trained)`;
    // Class `p`, not `t`: the response's token elements stay the only `.t` of a sample.
    out += `<span class="${text === undefined ? "p" : tokenClass(text).replace(/^t/, "p")}" data-k="${k}" data-id="${id}"${textAttr} title="${escapeAttr(title)}">${shown}</span>`;
  });
  return out;
}

/** The text of the token at position `k` of prompt + response, if known and the ids agree. */
type ContextText = (k: number, id: number) => string | undefined;

/** Reads context texts from the sample's last call's prompt, checking each id against it. */
function contextTextOf(
  sample: TrainingSample,
  calls: ReadonlyMap<string, LlmCall>,
  texts: PromptTexts,
): ContextText {
  const ids = Array.isArray(sample.extra_fields.calls)
    ? (sample.extra_fields.calls as string[])
    : [];
  const last = calls.get(ids[ids.length - 1] ?? "");
  const known = last ? texts.get(last.call_id) : undefined;
  if (!last || !known) return () => undefined;
  return (k, id) => (last.prompt_token_ids[k] === id ? known[k] : undefined);
}

/**
 * The response split by call: before call j's completion come the tokens its prompt added after
 * the previous completion (tool results, template glue: mask 0). Positions come from the recorded
 * prompt lengths; the mask of each token is read from the sample.
 */
function stripBody(
  sample: TrainingSample,
  calls: ReadonlyMap<string, LlmCall>,
  callNumbers: ReadonlyMap<string, number>,
  context: ContextText,
): string {
  const contextSlice = (from: number, to: number): (string | undefined)[] => {
    const out: (string | undefined)[] = [];
    for (let i = from; i < to; i++)
      out.push(context(sample.prompt_ids.length + i, sample.response_ids[i]!));
    return out;
  };
  const ids = Array.isArray(sample.extra_fields.calls)
    ? (sample.extra_fields.calls as string[])
    : [];
  let out = "";
  let pos = 0;
  ids.forEach((id, j) => {
    const call = calls.get(id);
    if (!call) return;
    if (j > 0) {
      const between = Math.max(0, call.prompt_token_ids.length - (sample.prompt_ids.length + pos));
      const to = Math.min(sample.response_ids.length, pos + between);
      out += tokens(sample, pos, to, "", contextSlice(pos, to));
      pos += between;
    }
    const end = Math.min(sample.response_ids.length, pos + call.completion_token_ids.length);
    const version =
      call.policy_version_start === call.policy_version_end
        ? `v${call.policy_version_start}`
        : `v${call.policy_version_start}→v${call.policy_version_end}`;
    const label = `call ${callNumbers.get(id) ?? "?"} · policy ${version}`;
    out += `<span class="call-mark" data-call-id="${escapeAttr(id)}" data-policy-version="${call.policy_version_start}">${escapeAttr(label)}</span>`;
    const texts =
      call.completion_token_strs?.length === call.completion_token_ids.length
        ? call.completion_token_strs
        : undefined;
    out += tokens(sample, pos, end, label, texts);
    pos = end;
  });
  // Anything the call walk did not cover (it should not happen) is still shown, with its own mask.
  if (pos < sample.response_ids.length)
    out += tokens(
      sample,
      pos,
      sample.response_ids.length,
      "",
      contextSlice(pos, sample.response_ids.length),
    );
  return out;
}

/** One sample's strip with its header (sizes, reward, policy versions, flags). */
export function tokenStrip(
  sample: TrainingSample,
  calls: ReadonlyMap<string, LlmCall>,
  callNumbers: ReadonlyMap<string, number>,
  texts: PromptTexts = new Map(),
): Html {
  const context = contextTextOf(sample, calls, texts);
  const totals = maskTotals(sample);
  const extra = sample.extra_fields;
  const truncatedBy = extra.truncated ? String(extra.truncated_by ?? "yes") : null;
  const drift = sample.segment_index > 0 && extra.sample_mode === "cumulative";
  return html`<div class="sample card" data-segment="${sample.segment_index}" data-response-tokens="${sample.response_ids.length}">
<div><strong>sample ${sample.segment_index}</strong> · uid <code>${sample.uid}</code> · prompt ${totals.prompt} tokens (not trained) · response ${sample.response_ids.length}: <span class="ok">${totals.trained} trained (mask 1)</span>, ${totals.context} context (mask 0) · reward ${num(sample.reward_score)} · policy v${sample.policy_version.start}${sample.policy_version.end !== sample.policy_version.start ? `–v${sample.policy_version.end}` : ""} · ${sample.num_turns} turns${extra.trainable === false ? " · masked by default (failed or truncated)" : ""}</div>
${drift ? html`<div class="drift warn" data-drift-split="${sample.segment_index}">⤷ drift split: this call's prompt did not extend the previous sample's prompt + response, so a new sample starts here (never re-tokenized).</div>` : ""}
<details><summary class="muted">prompt tokens (${totals.prompt})</summary><div class="prompt-strip">${raw(promptTokens(sample, context))}</div></details>
<div class="strip">${raw(stripBody(sample, calls, callNumbers, context))}${truncatedBy ? html`<span class="cut" data-truncated-by="${truncatedBy}">✂ truncated (${truncatedBy})</span>` : ""}</div></div>`;
}
