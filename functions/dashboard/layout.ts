/** @module The page shell every dashboard page shares: head, styles, navigation. */
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/** Rendered HTML (escaped where it came from data). */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const STYLES = `
:root { --fg:#1d2330; --muted:#6b7385; --line:#dfe3ea; --bg:#f7f8fa; --ok:#2f8f4e; --bad:#c2413b; --warn:#b7791f; --accent:#3a5bd9; --m1:#c9f0d2; --m0:#e6e9ef; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, Segoe UI, sans-serif; color:var(--fg); background:var(--bg); }
header { display:flex; gap:1.5rem; align-items:center; padding:.6rem 1.2rem; background:#fff; border-bottom:1px solid var(--line); }
header a { color:var(--fg); text-decoration:none; font-weight:500; }
header .brand { font-weight:700; }
header form { margin-left:auto; }
main { padding:1rem 1.2rem; max-width:1400px; }
h1 { font-size:1.3rem; margin:.2rem 0 1rem; } h2 { font-size:1.05rem; margin:1.4rem 0 .5rem; }
section.card { background:#fff; border:1px solid var(--line); border-radius:6px; padding:.8rem 1rem; margin-bottom:1rem; }
.grid { display:grid; grid-template-columns:repeat(auto-fit, minmax(320px, 1fr)); gap:1rem; }
table { border-collapse:collapse; width:100%; } th, td { text-align:left; padding:.3rem .5rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:500; font-size:.85rem; } td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
.muted { color:var(--muted); } .ok { color:var(--ok); } .bad { color:var(--bad); } .warn { color:var(--warn); }
.pill { display:inline-block; padding:0 .45rem; border-radius:9px; font-size:.8rem; background:var(--m0); }
.pill.succeeded, .pill.completed, .pill.healthy { background:#d5f2dd; } .pill.failed, .pill.unhealthy { background:#f8d7d5; } .pill.running, .pill.queued { background:#dde6ff; } .pill.cancelled, .pill.cancelling { background:#f3e6c8; }
.bar { display:flex; height:14px; border-radius:3px; overflow:hidden; background:var(--m0); } .bar span { display:block; height:100%; }
form.inline { display:inline; } button { font:inherit; padding:.25rem .7rem; border:1px solid var(--line); border-radius:4px; background:#fff; cursor:pointer; } button.danger { color:var(--bad); border-color:var(--bad); }
input, select { font:inherit; padding:.2rem .35rem; border:1px solid var(--line); border-radius:4px; }
.filters { display:flex; flex-wrap:wrap; gap:.5rem; align-items:end; } .filters label { display:flex; flex-direction:column; font-size:.8rem; color:var(--muted); }
.msg { border-left:3px solid var(--line); padding:.2rem .6rem; margin:.35rem 0; white-space:pre-wrap; word-break:break-word; }
.msg.assistant { border-color:var(--accent); } .msg.tool { border-color:var(--warn); } .msg.user, .msg.system { border-color:var(--muted); }
.turn { margin:.6rem 0; padding:.5rem .7rem; border:1px solid var(--line); border-radius:5px; background:#fff; }
.turn.excluded, .attempt.excluded { opacity:.45; }
.strip, .prompt-strip { font:12px/1.9 ui-monospace, SFMono-Regular, Menlo, monospace; word-break:break-all; }
.strip .t, .prompt-strip .p { padding:1px 2px; margin:0 1px 0 0; border-radius:2px; }
.strip .t[data-mask="1"] { background:var(--m1); } .strip .t[data-mask="0"] { background:var(--m0); color:var(--muted); }
.prompt-strip .p { background:var(--m0); color:var(--muted); }
.strip .t.special, .prompt-strip .p.special { outline:1px dashed var(--accent); font-weight:600; } .strip .t.bytes, .prompt-strip .p.bytes { outline:1px dotted var(--warn); }
.strip .call-mark { font-size:10px; color:var(--accent); margin:0 2px; } .strip .cut { color:var(--bad); font-weight:600; }
details > summary { cursor:pointer; }
`;

/** Wraps `body` in the shared shell; `signedIn` shows the log-out button (only when API_TOKEN is set). */
export function layout(
  title: string,
  body: Html,
  options: { signedIn?: boolean; script?: string } = {},
): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · edge-rollout</title><style>${raw(STYLES)}</style></head>
<body>
<header><a class="brand" href="/">edge-rollout</a><a href="/">Overview</a><a href="/batches">Batches</a><a href="/rollouts">Rollouts</a><a href="/online">Online</a>
${options.signedIn ? html`<form method="post" action="/logout"><button type="submit">Log out</button></form>` : ""}</header>
<main>${body}</main>
${options.script ? html`<script>${raw(options.script)}</script>` : ""}
</body></html>`;
}
