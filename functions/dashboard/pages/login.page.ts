/** @module `/login`: the form that trades API_TOKEN for a session cookie (the token travels in the POST body only). */
import { html } from "hono/html";
import type { Html } from "../layout";

/** The login form; `next` is the local path to return to, `failed` shows the refusal. */
export function loginPage(next: string, failed: boolean): Html {
  return html`<h1>Log in</h1>
<section class="card" style="max-width:420px">
<form method="post" action="/login">
<p>Paste the deployment's <code>API_TOKEN</code>. It is checked once and never stored in the browser; a session cookie (HttpOnly, 12 h) is set instead.</p>
${failed ? html`<p class="bad" id="login-error">That token is not valid.</p>` : ""}
<input type="hidden" name="next" value="${next}">
<p><input type="password" name="token" autocomplete="current-password" required style="width:100%"></p>
<button type="submit" id="login-submit">Log in</button></form></section>`;
}
