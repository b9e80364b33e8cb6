/** @module Number, time and status formatting shared by the dashboard pages. */
import { html } from "hono/html";
import type { Html } from "../layout";

/** A number with up to `digits` decimals, or "–" for null. */
export function num(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "–";
  return Number.isInteger(value) ? String(value) : value.toFixed(digits).replace(/\.?0+$/, "");
}

/** A fraction as a percentage with one decimal. */
export function pct(value: number | null | undefined): string {
  return value === null || value === undefined ? "–" : `${(value * 100).toFixed(1)}%`;
}

/** A time as ISO without milliseconds, or "–". */
export function time(ms: number | null | undefined): string {
  return ms
    ? new Date(ms)
        .toISOString()
        .replace(/\.\d+Z$/, "Z")
        .replace("T", " ")
    : "–";
}

/** A duration in ms as `850 ms`, `12.3 s`, `4 min 05 s`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  // Each branch rounds first and picks its unit by the rounded value, so a value just under a
  // boundary reads "1.0 s" or "1 min 00 s", never "1000 ms", "60.0 s" or "9 min 60 s".
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`;
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, "0")} s`;
}

/** A status as a coloured pill. */
export function pill(status: string): Html {
  return html`<span class="pill ${status}">${status}</span>`;
}
