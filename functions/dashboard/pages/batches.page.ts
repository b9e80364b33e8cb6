/** @module `/batches`: every batch, newest first, filterable by series and mode, paged by creation time. */
import { html } from "hono/html";
import type { ListedBatch } from "../../views/batch-views";
import { batchTable } from "../components/batch-rows";
import type { Html } from "../layout";

/** The batch list's body; `query` is what the filters were set to. */
export function batchesPage(
  batches: readonly ListedBatch[],
  query: { series?: string | undefined; mode?: string | undefined; limit: number },
): Html {
  const last = batches.at(-1);
  const next =
    last && batches.length === query.limit
      ? `/batches?${new URLSearchParams({ ...(query.series ? { series: query.series } : {}), ...(query.mode ? { mode: query.mode } : {}), before: String(last.created_at) }).toString()}`
      : null;
  return html`<h1>Batches</h1>
<form class="filters card" method="get" action="/batches">
<label>series<input name="series" value="${query.series ?? ""}" placeholder="run7-step-"></label>
<label>mode<select name="mode"><option value="">any</option>${["train", "val"].map((m) => html`<option ${query.mode === m ? "selected" : ""}>${m}</option>`)}</select></label>
<button type="submit">Filter</button></form>
<section class="card">${batchTable(batches)}${next ? html`<p><a href="${next}" id="older">Older →</a></p>` : ""}</section>`;
}
