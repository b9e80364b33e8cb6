/** @module Inline SVG charts (no script, no library): a line chart over batches and a reward histogram. */
import { html } from "hono/html";
import type { Html } from "../layout";
import { num } from "./format";

/** One point of a line chart; `href` makes its dot a link. */
export interface ChartPoint {
  label: string;
  value: number;
  href?: string;
}

const W = 560;
const H = 180;
const PAD = { left: 44, right: 12, top: 12, bottom: 28 };

/**
 * The y range of `values`: their extremes; when they are all one value (a single point), a range
 * that value sits in naturally: [0, 1] for a value in it (a reward, a share), else from 0 to it.
 */
export function chartRange(values: readonly number[]): [lo: number, hi: number] {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  if (hi - lo >= 1e-9) return [lo, hi];
  if (lo >= 0 && lo <= 1) return [0, 1];
  return lo > 0 ? [0, lo] : [lo, 0];
}

/**
 * A line chart of `points` in order (e.g. reward mean over a series of batches). Each dot carries
 * `data-value` and a `<title>`, so the exact number is on hover and readable by scripts.
 */
export function lineChart(
  points: readonly ChartPoint[],
  options: { yLabel: string; current?: string; id?: string },
): Html {
  if (points.length === 0)
    return html`<p class="muted">No finished batches with a ${options.yLabel} yet.</p>`;
  const values = points.map((p) => p.value);
  const [lo, hi] = chartRange(values);
  const x = (i: number) =>
    PAD.left +
    (points.length === 1
      ? (W - PAD.left - PAD.right) / 2
      : (i * (W - PAD.left - PAD.right)) / (points.length - 1));
  const y = (v: number) => PAD.top + (1 - (v - lo) / (hi - lo)) * (H - PAD.top - PAD.bottom);
  const path = points
    .map((p, i) => `${i === 0 ? "M" : "L"}${x(i).toFixed(1)},${y(p.value).toFixed(1)}`)
    .join(" ");
  const dots = points.map((p, i) => {
    const dot = html`<circle class="point" cx="${x(i).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="${p.label === options.current ? 5 : 3.5}" fill="${p.label === options.current ? "#c2413b" : "#3a5bd9"}" data-label="${p.label}" data-value="${p.value}"><title>${p.label}: ${num(p.value, 4)}</title></circle>`;
    return p.href ? html`<a href="${p.href}">${dot}</a>` : dot;
  });
  return html`<svg class="line-chart"${options.id ? html` id="${options.id}"` : ""} viewBox="0 0 ${W} ${H}" width="100%" style="max-width:${W}px" role="img" aria-label="${options.yLabel} over ${points.length} batches">
<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#dfe3ea"/>
<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${H - PAD.bottom}" stroke="#dfe3ea"/>
<text x="4" y="${PAD.top + 4}" font-size="10" fill="#6b7385">${num(hi, 3)}</text><text x="4" y="${H - PAD.bottom}" font-size="10" fill="#6b7385">${num(lo, 3)}</text>
${points.length === 1 ? html`<text x="${x(0).toFixed(1)}" y="${H - 8}" font-size="10" fill="#6b7385" text-anchor="middle">${points[0]!.label}: ${num(points[0]!.value, 4)}</text>` : html`<text x="${PAD.left}" y="${H - 8}" font-size="10" fill="#6b7385">${points[0]!.label}</text><text x="${W - PAD.right}" y="${H - 8}" font-size="10" fill="#6b7385" text-anchor="end">${points.at(-1)!.label}</text>`}
<path d="${path}" fill="none" stroke="#3a5bd9" stroke-width="2"/>${dots}</svg>`;
}

/** Bars of a reward histogram; each bar has `data-count` and the bin's range on hover. */
export function histogram(bins: ReadonlyArray<{ from: number; to: number; count: number }>): Html {
  if (bins.length === 0) return html`<p class="muted">No rewards yet.</p>`;
  const max = Math.max(1, ...bins.map((b) => b.count));
  const width = (W - PAD.left - PAD.right) / bins.length;
  const bars = bins.map((bin, i) => {
    const h = (bin.count / max) * (H - PAD.top - PAD.bottom);
    const label = bin.from === bin.to ? num(bin.from, 3) : `${num(bin.from, 2)}–${num(bin.to, 2)}`;
    const bx = PAD.left + i * width;
    return html`<g class="bin" data-from="${bin.from}" data-to="${bin.to}" data-count="${bin.count}"><rect x="${(bx + 2).toFixed(1)}" y="${(H - PAD.bottom - h).toFixed(1)}" width="${Math.max(1, width - 4).toFixed(1)}" height="${h.toFixed(1)}" fill="#3a5bd9"><title>reward ${label}: ${bin.count}</title></rect>
<text x="${(bx + width / 2).toFixed(1)}" y="${H - 12}" font-size="10" text-anchor="middle" fill="#6b7385">${label}</text><text x="${(bx + width / 2).toFixed(1)}" y="${(H - PAD.bottom - h - 3).toFixed(1)}" font-size="10" text-anchor="middle">${bin.count}</text></g>`;
  });
  return html`<svg class="histogram" viewBox="0 0 ${W} ${H}" width="100%" style="max-width:${W}px" role="img" aria-label="reward distribution">${bars}</svg>`;
}

/** A stacked bar of counts by status, in the given order and colours. */
export function statusBar(
  parts: ReadonlyArray<{ key: string; count: number; color: string }>,
): Html {
  const total = parts.reduce((sum, p) => sum + p.count, 0) || 1;
  return html`<div class="bar">${parts.filter((p) => p.count > 0).map((p) => html`<span title="${p.key}: ${p.count}" style="width:${((100 * p.count) / total).toFixed(2)}%;background:${p.color}"></span>`)}</div>`;
}
