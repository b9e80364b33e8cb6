/**
 * @module Which format `POST /v1/feed/pull` answers in, from the request's `Accept` header
 * (RFC 9110 §12.5.1): JSON (the default) or an Arrow IPC stream.
 */
import { z } from "zod";
import { ARROW_STREAM_MEDIA_TYPE } from "../../sink/formats/arrow/arrow-format";

/** The pull's answer formats. */
export type PullFormat = "json" | "arrow";

/** Media type of each format, in the order a tie is broken (JSON, the default, last). */
export const PULL_MEDIA_TYPES: Record<PullFormat, string> = {
  arrow: ARROW_STREAM_MEDIA_TYPE,
  json: "application/json",
};

/** An `Accept` header as the route takes it: absent, or at most 2,048 characters. */
export const AcceptHeader = z.string().max(2048, "Accept must be <= 2048 characters").optional();

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function ranges(header: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const part of header.split(",")) {
    const [range, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const [type, subtype] = (range ?? "").split("/");
    if (!type || !subtype) continue; // malformed ranges are ignored
    const qParam = params.find((p) => p.startsWith("q="));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (Number.isNaN(q) || q < 0 || q > 1) continue;
    out.push({ type, subtype, q });
  }
  return out;
}

/** The q of the most specific range matching `mediaType` (exact, then `type/*`, then `*\/*`); 0 if none. */
function quality(mediaType: string, accepted: MediaRange[]): { q: number; exact: boolean } {
  const [type, subtype] = mediaType.split("/") as [string, string];
  const exact = accepted.find((r) => r.type === type && r.subtype === subtype);
  if (exact) return { q: exact.q, exact: true };
  const partial =
    accepted.find((r) => r.type === type && r.subtype === "*") ??
    accepted.find((r) => r.type === "*" && r.subtype === "*");
  return { q: partial?.q ?? 0, exact: false };
}

/**
 * The format to answer in: JSON when there is no `Accept` (or it allows anything); Arrow when
 * `Accept` prefers it: a higher q, or the same q with the Arrow type named exactly (`Accept:
 * application/vnd.apache.arrow.stream, application/json` asks for Arrow, JSON as a fallback);
 * null when it allows neither (the route answers 406 rather than a body the caller cannot read).
 */
export function negotiatePullFormat(accept: string | undefined): PullFormat | null {
  if (accept === undefined || accept.trim() === "") return "json";
  const accepted = ranges(accept);
  if (accepted.length === 0) return "json"; // nothing parseable: as if absent
  const arrow = quality(PULL_MEDIA_TYPES.arrow, accepted);
  const json = quality(PULL_MEDIA_TYPES.json, accepted);
  if (arrow.q === 0 && json.q === 0) return null;
  if (arrow.q > json.q || (arrow.q === json.q && arrow.exact)) return "arrow";
  return "json";
}
