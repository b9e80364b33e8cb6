/** @module `/rollouts/:id`: one rollout turn by turn, its spans and attempts, and the token strip of each training sample; live while it runs. */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { LlmCall } from "../../../src/schemas/llm-call";
import type { RolloutView } from "../../../src/schemas/rollout-api";
import type { TrainingSample } from "../../../src/schemas/training-sample";
import { TERMINAL_STATUSES } from "../../../src/schemas/termination";
import { groupOf, parseBatchRolloutId } from "../../../src/schemas/batch-rollout-id";
import { buildSamplesForView } from "../../../src/training";
import { duration, num, pill, time } from "../components/format";
import { tokenStrip } from "../components/token-strip";
import type { PromptTexts } from "../context-texts";
import { spansTable, turns } from "../components/turns";
import type { Html } from "../layout";

/** Whether the rollout may still change (the page then follows it over SSE). */
export function isLive(view: RolloutView): boolean {
  return !TERMINAL_STATUSES.has(view.status);
}

/** Looks up the text of the context tokens of the samples shown (see `contextTexts`). */
export type ContextTextLookup = (
  samples: readonly TrainingSample[],
  calls: ReadonlyMap<string, LlmCall>,
) => Promise<PromptTexts>;

/**
 * Everything below the title: re-rendered and swapped in when the rollout changes. Without
 * `lookup`, context tokens show ids only.
 */
export async function rolloutBody(
  view: RolloutView,
  lookup?: ContextTextLookup,
): Promise<HtmlEscapedString> {
  const built = buildSamplesForView(view, groupOf(view.rollout_id));
  const calls = new Map(view.llm_calls.map((call) => [call.call_id, call]));
  const texts = lookup ? await lookup(built.samples, calls) : new Map<string, readonly string[]>();
  const numbers = new Map(view.llm_calls.map((call, i) => [call.call_id, i + 1]));
  const batch = parseBatchRolloutId(view.rollout_id)?.batch_id ?? null;
  const took =
    view.finished_at === null
      ? `running for ${duration(Date.now() - view.created_at)}`
      : duration(view.finished_at - view.created_at);
  return html`<table class="card"><tbody>
<tr><th>status</th><td data-field="status">${pill(view.status)} ${view.termination_reason ?? ""}${view.error ? html` · <span class="bad">${view.error}</span>` : ""}</td></tr>
${view.outcome ? html`<tr><th>outcome</th><td data-field="outcome">${view.outcome === "infra" ? html`<span class="bad">infrastructure failure</span> (never scored${view.group && view.group.attempt < view.group.max_member_retries ? ": its slot is re-run" : ""})` : view.outcome === "cut" ? "cut (never trained)" : "policy outcome (scored)"}</td></tr>` : ""}
${view.group ? html`<tr><th>group</th><td data-field="group"><a href="/groups/${encodeURIComponent(view.group.uid)}"><code>${view.group.uid}</code></a> sample ${view.group.sample_index} of ${view.group.group_size}${view.group.attempt > 0 ? html` · <span data-field="attempt">run ${view.group.attempt + 1} of its slot</span>` : ""}</td></tr>` : ""}
${view.tree ? html`<tr><th>tree</th><td data-field="tree">forked from <a href="/rollouts/${encodeURIComponent(view.tree.parent)}" data-field="tree-parent"><code>${view.tree.parent}</code></a> at step <span data-field="branch-step">${view.tree.branch_step}</span> (branch ${view.tree.branch_index}; steps before it are the parent's)${view.tree.root !== view.tree.parent ? html` · root <a href="/rollouts/${encodeURIComponent(view.tree.root)}"><code>${view.tree.root}</code></a>` : ""}</td></tr>` : ""}
${view.forks.length > 0 ? html`<tr><th>forks</th><td data-field="forks">${view.forks.map((fork) => html`<div data-branch-step="${fork.at_step}">at step ${fork.at_step}: ${fork.children.map((id) => html`<a href="/rollouts/${encodeURIComponent(id)}" data-field="fork-child"><code>${id}</code></a> `)}${fork.unlisted > 0 ? `and ${fork.unlisted} more` : ""}</div>`)}</td></tr>` : ""}
<tr><th>reward</th><td data-field="reward">${num(view.reward, 4)}</td></tr>
<tr><th>agent</th><td>${view.agent}${batch ? html` · batch <a href="/batches/${encodeURIComponent(batch)}">${batch}</a>` : ""}</td></tr>
<tr><th>task</th><td>${view.trajectory.task.problem.slice(0, 500)}</td></tr>
<tr><th>model calls</th><td><span data-field="llm-calls">${view.llm_calls.length}</span> · steps <span data-field="steps">${view.trajectory.steps.length}</span> · prompt ${view.usage.prompt_tokens} tok · completion ${view.usage.completion_tokens} tok${view.attempts ? ` · ${view.attempts} attempts (final ${view.final_attempt ?? "–"})` : ""}</td></tr>
<tr><th>time</th><td>${time(view.created_at)} · ${took} · published: ${view.publication.status}</td></tr>
</tbody></table>
<h2>Turns</h2><div id="turns">${turns(view)}</div>
<h2>Spans</h2>${spansTable(view.spans, view.final_attempt)}
<h2>Training samples</h2>
<p class="muted">${view.config.sample_mode} mode · ${built.samples.length} samples · drift splits <span data-field="drift-splits">${built.drift_splits}</span> · cut from the recorded calls by the sink's own sample builder${isLive(view) ? " (the rollout is still running; these are the samples so far)" : ""}. Green tokens train (mask 1); grey are context (mask 0). Hover a token for its id and logprob.</p>
${built.samples.length === 0 ? html`<p class="muted">No training samples: no call with token ids and logprobs yet.</p>` : built.samples.map((sample) => tokenStrip(sample, calls, numbers, texts))}`;
}

/**
 * Follows the rollout's events; on each step (and at the end) fetches the body again and swaps it
 * in, without reloading. A refresh asked for while one runs runs once more after it, so the last
 * state is never skipped; "finished" is shown only once the final body is in.
 */
export function liveScript(rolloutId: string): string {
  const id = JSON.stringify(encodeURIComponent(rolloutId));
  return `(() => {
  const base = "/rollouts/" + ${id};
  const body = document.getElementById("rollout-body");
  const live = document.getElementById("live");
  let running = null, again = false;
  const refresh = () => {
    if (running) { again = true; return running; }
    running = (async () => {
      do {
        again = false;
        const r = await fetch(base + "?fragment=1", { credentials: "same-origin" });
        if (r.ok) { body.innerHTML = await r.text(); body.dataset.updates = String(Number(body.dataset.updates || 0) + 1); }
      } while (again);
    })().finally(() => { running = null; });
    return running;
  };
  const events = new EventSource(base + "/live");
  events.addEventListener("step", refresh);
  events.addEventListener("end", async () => { events.close(); clearInterval(timer); await refresh(); live.textContent = "finished"; });
  // Calls of function agents are not steps: poll too while the rollout runs.
  const timer = setInterval(refresh, 3000);
})();`;
}

/** The rollout page's body. */
export function rolloutPage(view: RolloutView, lookup?: ContextTextLookup): Html {
  return html`<h1>Rollout <code data-field="rollout-id">${view.rollout_id}</code> ${isLive(view) ? html`<span class="pill running" id="live">live</span>` : ""}</h1>
<div id="rollout-body" data-updates="0">${rolloutBody(view, lookup)}</div>`;
}
