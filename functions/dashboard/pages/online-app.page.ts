/** @module `/online` and `/online/:app`: the applications, and one application's split, sessions and rewards per version, and the split guard. */
import { html } from "hono/html";
import type { AppView } from "../../../src/schemas/online";
import type { OnlineAppView } from "../../views/online-views";
import { SESSIONS_COUNTED } from "../../views/online-views";
import { duration, num, pill, time } from "../components/format";
import { guardCard, versionTable } from "../components/online-tables";
import type { Html } from "../layout";

/** The list of applications. */
export function onlineAppsPage(apps: readonly AppView[]): Html {
  return html`<h1>Online applications</h1>
<section class="card"><table id="apps"><thead><tr><th>name</th><th>id</th><th>key</th><th>created</th><th>state</th><th></th></tr></thead><tbody>
${apps.length === 0 ? html`<tr><td colspan="6" class="muted">none yet (POST /v1/online/apps)</td></tr>` : ""}
${apps.map((a) => html`<tr data-app="${a.app_id}"><td><a href="/online/${a.app_id}">${a.name}</a></td><td><code>${a.app_id}</code></td><td><code>${a.key_prefix}…</code></td><td>${time(a.created_at)}</td><td>${a.revoked_at ? pill("revoked") : pill("active")}</td><td>${a.revoked_at ? "" : html`<a href="/online/${a.app_id}/playground">playground</a>`}</td></tr>`)}
</tbody></table></section>`;
}

/** One application's page. */
export function onlineAppPage(view: OnlineAppView, now: number): Html {
  const { app, sessions } = view;
  const s = app.settings;
  return html`<h1>${app.name} <span class="muted">${app.app_id}</span></h1>
<p>${app.revoked_at ? html`${pill("revoked")} since ${time(app.revoked_at)}` : html`<a href="/online/${app.app_id}/playground" id="open-playground">Open the playground →</a>`}</p>
<section class="card"><h2>Versions</h2>${versionTable(view.versions)}
<p class="muted">Split generation ${view.serving.generation}. Counted over this application's newest ${SESSIONS_COUNTED} sessions; the mean reward is over scored sessions (feedback combined by the last per source, averaged over sources) with a 95% normal interval. Feedback counts every event, open sessions' too.</p></section>
<div class="grid">
<section class="card"><h2>Settings</h2><table>
<tr><th>feedback window</th><td>${duration(s.feedback_window_ms)}</td></tr>
<tr><th>retention</th><td>${duration(s.retention_ms)}</td></tr>
<tr><th>rate limit</th><td>${num(s.rate_limit.per_second)}/s, bursts of ${s.rate_limit.burst}</td></tr>
<tr><th>prompt group size</th><td>${s.prompt_group_size}</td></tr>
<tr><th>training mode</th><td><code>${s.training_mode}</code></td></tr></table></section>
${guardCard(view.guard)}</div>
<section class="card"><h2>Recent sessions</h2><table id="sessions"><thead><tr><th>session</th><th>version</th><th>status</th><th class="num">feedback</th><th class="num">reward</th><th>started</th><th>closes</th></tr></thead><tbody>
${sessions.length === 0 ? html`<tr><td colspan="7" class="muted">none yet</td></tr>` : ""}
${sessions.slice(0, 50).map((x) => html`<tr data-session="${x.session_id}"><td><a href="/rollouts/${encodeURIComponent(x.rollout_id)}">${x.session_id}</a></td><td data-field="version">${x.version}</td><td>${pill(x.status)}</td><td class="num" data-field="feedback">${x.feedback.length}</td><td class="num">${num(x.reward)}</td><td>${time(x.created_at)}</td><td>${x.status === "open" ? `in ${duration(Math.floor((x.closes_at - now) / 1000) * 1000)}` : time(x.closes_at)}</td></tr>`)}
</tbody></table></section>`;
}
