/** @module `/groups/:uid`: one GRPO group's members side by side with the advantages verl gives them, and what became of the group. */
import { html } from "hono/html";
import type { GroupView } from "../../../src/schemas/run-view";
import { num, pill } from "../components/format";
import type { Html } from "../layout";

/** A member's final answer, shortened for the table (the full text on hover). */
function answer(text: string | null): Html {
  if (text === null) return html`<span class="muted">–</span>`;
  const short = text.length > 160 ? `${text.slice(0, 160)}…` : text;
  return html`<span title="${text}">${short}</span>`;
}

/** The group page's body. */
export function groupPage(view: GroupView): Html {
  const trained = view.status.verdict === "deliver" || view.status.verdict === "deliver_valid";
  return html`<h1>Group <code data-field="uid">${view.uid}</code></h1>
<p class="muted">batch <a href="/batches/${encodeURIComponent(view.batch_id)}"><code>${view.batch_id}</code></a> · row ${view.row_index} · n ${view.n} · training mode ${view.training_mode}</p>
<section class="card" id="group-status"><h2>What became of it</h2><p class="${trained ? "ok" : view.status.complete ? "warn" : "muted"}" data-field="verdict" data-verdict="${view.status.verdict ?? ""}">${view.status.reason}</p>
<p>scored members' reward mean <strong data-field="mean">${num(view.mean, 6)}</strong>, unbiased std <strong data-field="std">${num(view.std, 6)}</strong> (one member: mean 0, std 1, as verl).
GRPO advantage = (r − mean) / (std + 1e-6); Dr.GRPO = r − mean (verl's <code>compute_grpo_outcome_advantage</code>).</p></section>
<section class="card" id="members"><h2>Members</h2><table><thead><tr><th class="num">#</th><th>rollout</th><th>status</th><th>termination</th><th class="num">reward</th><th class="num">GRPO advantage</th><th class="num">Dr.GRPO advantage</th><th class="num">completion tokens</th><th class="num">calls</th><th>final answer</th></tr></thead><tbody>
${view.members.map(
  (
    m,
  ) => html`<tr data-sample-index="${m.sample_index}" data-scored="${m.scored}"><td class="num">${m.sample_index}</td>
<td>${m.rollout_id ? html`<a href="/rollouts/${encodeURIComponent(m.rollout_id)}"><code>${m.rollout_id}</code></a>` : html`<span class="muted">not released</span>`}</td>
<td>${pill(m.status)}${m.outcome && m.outcome !== "policy" ? html` <span class="warn">${m.outcome}</span>` : ""}</td><td>${m.termination_reason ?? "–"}</td>
<td class="num" data-field="reward" data-value="${m.reward ?? ""}">${num(m.reward, 4)}</td>
<td class="num" data-field="advantage-grpo" data-value="${m.advantage_grpo ?? ""}">${m.advantage_grpo === null ? html`<span class="muted">not trained</span>` : num(m.advantage_grpo, 4)}</td>
<td class="num" data-field="advantage-drgrpo" data-value="${m.advantage_drgrpo ?? ""}">${m.advantage_drgrpo === null ? "–" : num(m.advantage_drgrpo, 4)}</td>
<td class="num" data-field="completion-tokens">${m.completion_tokens ?? "–"}</td><td class="num">${m.llm_calls ?? "–"}</td><td data-field="answer">${answer(m.final_answer)}</td></tr>`,
)}
</tbody></table></section>`;
}
