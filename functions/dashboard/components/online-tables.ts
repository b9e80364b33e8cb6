/** @module The online pages' tables: versions with their split share, counts and reward interval; the split guard's config and log. */
import { html } from "hono/html";
import type { GuardView } from "../../../src/runtime/online";
import type { VersionRow } from "../../views/online-version-rows";
import { num, pct, time } from "./format";
import type { Html } from "../layout";

/** A `[lo, hi]` interval, or "–". */
function interval(ci: [number, number] | null): string {
  return ci ? `[${num(ci[0])}, ${num(ci[1])}]` : "–";
}

/** Weights as `3: 90 · 4: 10`. */
function weights(w: Record<string, number>): string {
  return Object.entries(w)
    .map(([v, x]) => `${v}: ${num(x)}`)
    .join(" · ");
}

/** One row per version (`data-version`), each count in a `data-field` cell. */
export function versionTable(rows: readonly VersionRow[]): Html {
  return html`<table id="versions"><thead><tr><th>version</th><th class="num">split</th><th class="num">sessions</th><th class="num">open</th><th class="num">scored</th><th class="num">withheld</th><th class="num">feedback</th><th class="num">mean reward</th><th>95% interval</th></tr></thead><tbody>
${rows.length === 0 ? html`<tr><td colspan="9" class="muted">no version is served yet (PUT /v1/online/serving)</td></tr>` : ""}
${rows.map(
  (r) =>
    html`<tr data-version="${r.version}"><td>${r.version}</td><td class="num" data-field="share">${pct(r.share)}</td><td class="num" data-field="sessions">${r.sessions}</td><td class="num" data-field="open">${r.open}</td><td class="num" data-field="scored">${r.scored}</td><td class="num" data-field="withheld">${r.withheld}</td><td class="num" data-field="feedback">${r.feedback}</td><td class="num" data-field="mean">${num(r.reward.mean)}</td><td data-field="ci">${interval(r.reward.ci)}</td></tr>`,
)}
</tbody></table>`;
}

/** The guard's config, its deployment-wide rewards (at its own z) and its actions, newest first. */
export function guardCard(guard: GuardView): Html {
  const { config } = guard;
  return html`<section class="card" id="guard"><h2>Split guard</h2>
<p data-field="guard-state">${config.enabled ? html`<span class="warn">enabled</span>` : html`<span class="muted">off</span>`}
· stable <code>${config.stable ?? "–"}</code> · at least ${config.min_sessions} scored sessions each · z ${num(config.z)}</p>
<p class="muted">It takes a candidate out of the split when the upper end of the z interval of its mean reward minus the stable version's is below 0. It counts every application's scored sessions since it was last set (<code>PUT /v1/online/guard</code>):</p>
<table><thead><tr><th>version</th><th class="num">scored</th><th class="num">mean</th><th>interval</th></tr></thead><tbody>
${guard.rewards.length === 0 ? html`<tr><td colspan="4" class="muted">no scored session counted yet</td></tr>` : ""}
${guard.rewards.map((r) => html`<tr data-guard-version="${r.version}"><td>${r.version}</td><td class="num">${r.sessions}</td><td class="num">${num(r.mean)}</td><td>${interval(r.ci)}</td></tr>`)}
</tbody></table>
<h2>Actions</h2>
<table id="guard-log"><thead><tr><th>at</th><th>removed</th><th class="num">its mean</th><th class="num">stable mean</th><th>difference interval</th><th>split before → after</th></tr></thead><tbody>
${guard.log.length === 0 ? html`<tr><td colspan="6" class="muted">none</td></tr>` : ""}
${guard.log.map((a) => html`<tr><td>${time(a.at)}</td><td>${a.version} (stable ${a.stable})</td><td class="num">${num(a.candidate_mean)}</td><td class="num">${num(a.stable_mean)}</td><td>${interval(a.difference_ci)}</td><td>${weights(a.weights_before)} → ${weights(a.weights_after)}</td></tr>`)}
</tbody></table></section>`;
}
