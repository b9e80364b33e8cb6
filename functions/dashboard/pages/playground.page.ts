/**
 * @module `/online/:app/playground`: a person chats with the application's serving versions and
 * rates each answer. The page posts to its own dashboard routes (same origin, the session cookie),
 * never to `/v1/online` with a key: nothing secret is in the page.
 */
import { html } from "hono/html";
import type { AppView } from "../../../src/schemas/online";
import type { Html } from "../layout";

/** The playground's body: the conversation, the input, and the session it is recorded as. */
export function playgroundPage(app: AppView): Html {
  return html`<h1>Playground · <a href="/online/${app.app_id}">${app.name}</a></h1>
<section class="card" style="max-width:900px">
<p class="muted">Each conversation is a real online session of this application: served by the version the split gives it, recorded, and scored by your ratings (feedback source <code>playground</code>: up is reward 1, down is 0) when its feedback window closes.</p>
<p>Session <code id="session-id"></code> <button type="button" id="new-session">New conversation</button></p>
<div id="conversation"></div>
<form id="chat-form"><p><textarea id="chat-input" rows="3" style="width:100%;font:inherit" placeholder="Say something" required></textarea></p>
<button type="submit" id="chat-send">Send</button> <span id="chat-status" class="muted"></span></form></section>`;
}

/** The page's script: keeps the conversation in memory, posts each turn and each rating to the dashboard's own routes. */
export function playgroundScript(appId: string): string {
  return `(() => {
const base = "/online/" + ${JSON.stringify(appId)} + "/playground";
const box = document.getElementById("conversation"), input = document.getElementById("chat-input");
const status = document.getElementById("chat-status"), send = document.getElementById("chat-send");
let session = "", messages = [];
function fresh() { session = "pg-" + crypto.randomUUID(); messages = []; box.textContent = ""; document.getElementById("session-id").textContent = session; }
async function post(path, body) {
  const r = await fetch(base + path, { method: "POST", credentials: "same-origin", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.detail || data.title || (data.error && data.error.message) || ("HTTP " + r.status));
  return data;
}
function show(role, text) { const d = document.createElement("div"); d.className = "msg " + role; d.dataset.role = role; d.textContent = text; box.appendChild(d); return d; }
function rating(answer) {
  const bar = document.createElement("div"); bar.className = "rating";
  for (const [value, label] of [["up", "Thumbs up"], ["down", "Thumbs down"]]) {
    const b = document.createElement("button"); b.type = "button"; b.textContent = label; b.dataset.rate = value; b.title = "rate " + value;
    b.onclick = async () => { try { await post("/feedback", { session_id: session, rating: value }); bar.dataset.rated = value; bar.querySelectorAll("button").forEach((x) => x.classList.toggle("ok", x === b)); status.textContent = "rated " + value; } catch (e) { status.textContent = e.message; } };
    bar.appendChild(b);
  }
  answer.appendChild(bar);
}
document.getElementById("new-session").onclick = fresh;
document.getElementById("chat-form").onsubmit = async (event) => {
  event.preventDefault();
  const text = input.value.trim(); if (!text) return;
  messages.push({ role: "user", content: text }); show("user", text); input.value = ""; send.disabled = true; status.textContent = "waiting for the answer…";
  try {
    const reply = await post("/chat", { session_id: session, messages });
    const content = (reply.choices && reply.choices[0] && reply.choices[0].message && reply.choices[0].message.content) || "";
    messages.push({ role: "assistant", content });
    const answer = show("assistant", content); answer.classList.add("answer"); rating(answer); status.textContent = "";
  } catch (e) { messages.pop(); status.textContent = e.message; }
  finally { send.disabled = false; }
};
fresh();
})();`;
}
