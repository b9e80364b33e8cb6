/**
 * @module A CPU profile of the Worker's isolate split into the phases of a rollout step: each
 * sample goes to the phase of the innermost frame of *our* code on its stack (so zod, JSON,
 * SQLite and RPC time count for the code that asked for them), or to the runtime when no frame
 * of ours is on the stack (native I/O and RPC plumbing, garbage collection).
 */
import { type CpuProfile, selfTimes } from "./cpu-profile";
import type { SourceLookup } from "./source-map";

/** A phase: a label and how to recognise a frame of it (its source file, its function name). */
interface PhaseRule {
  label: string;
  file?: RegExp;
  fn?: RegExp;
}

/**
 * Checked in order against each of our frames from the innermost outwards; the first frame that
 * matches any rule decides. Function-name rules come first where one file serves several phases.
 */
const RULES: PhaseRule[] = [
  // Operations first, anywhere on the stack (innermost wins): helpers they call count for them.
  { label: "session: commitStep (validate, store step + call, state)", fn: /^(commitStep)$/ },
  { label: "session: lease (+ resume: history read)", fn: /^(lease)$/ },
  { label: "session: finish (end state, end event)", fn: /^(finish)$/ },
  {
    label: "session: drive trigger (requestDrive, alarm → DRIVER)",
    fn: /^(requestDrive|driveFromAlarm)$/,
  },
  { label: "session: SSE events to the client", fn: /^(subscribe|rolloutEvents)$/ },
  {
    label: "session alarm: publication (record + ATIF to R2, result message)",
    fn: /^(publishIfPending|publishRollout)$/,
  },
  {
    label: "shard: admit + release (in the shard object)",
    file: /^(durable-objects\/admission-shard|src\/runtime\/policy\/)/,
  },
  {
    label: "session: commitStep (validate, store step + call, state)",
    file: /^(src\/runtime\/session\/|durable-objects\/rollout-session)/,
    fn: /^(commitStep|insertCall|insertStep|encodeCall|accountCall)$/,
  },
  {
    label: "session: lease (+ resume: history read)",
    file: /^(src\/runtime\/session\/|durable-objects\/rollout-session)/,
    fn: /^(lease|listSteps|listCalls)$/,
  },
  {
    label: "session: finish (end state, end event)",
    file: /^(src\/runtime\/session\/|durable-objects\/rollout-session)/,
    fn: /^(finish|end)$/,
  },
  {
    label: "session: drive trigger (requestDrive, alarm → DRIVER)",
    file: /^src\/runtime\/session\/lifecycle\/session-drive/,
  },
  {
    label: "session alarm: publication (record + ATIF to R2, result message)",
    file: /^(src\/sink\/|src\/training\/|src\/runtime\/session\/publication\/)/,
  },
  {
    label: "session: SSE events to the client",
    file: /^(src\/runtime\/session\/kernel\/(event-hub|session-view))/,
  },
  {
    label: "session: other (create, alarm, state reads)",
    file: /^(src\/runtime\/session\/|durable-objects\/)/,
  },
  {
    label: "driver: model call (admit/release RPCs, shaping, upstream HTTP, capture)",
    file: /^(src\/gateway\/|src\/runtime\/objects\/|src\/runtime\/gateway-deps\.ts$)/,
  },
  {
    label: "driver: lease, agent, env, step record, commit RPC",
    file: /^(src\/runtime\/(driver|engines)\/|src\/agents\/|src\/sdk\/|functions\/drive\.entrypoint|functions\/driver-deps)/,
  },
  {
    label: "queue consumers + feed",
    file: /^(functions\/[a-z-]+\.consumer|src\/runtime\/(feed|batch)\/)/,
  },
  { label: "HTTP API (create, events, reads)", file: /^(functions\/|src\/schemas\/)/ },
];
const OURS = /^(src|functions|durable-objects)\//;
/** Our frames that only pass a call through (the SQL counter): their time counts for whoever called them. */
const TRANSPARENT = /^src\/runtime\/(sql-counter|meta-table)\.ts$/;

/** Phase → CPU ms, plus the profile's total (idle excluded). */
export interface PhaseTimes {
  byPhase: Map<string, number>;
  /** Per phase: "our function ← leaf function" → ms (what to look at first). */
  hotspots: Map<string, Map<string, number>>;
  totalMs: number;
}

/** `../../src/x.ts` (as the map names sources) → `src/x.ts`; null for dependencies. */
function repoPath(source: string | null): string | null {
  if (!source) return null;
  const match = /(?:^|\/)((?:src|functions|durable-objects|node_modules)\/.*)$/.exec(source);
  return match ? match[1]! : null;
}

/** Splits `profile` into phases, mapping bundle positions back to source files with `sources`. */
export function phaseTimes(
  profile: CpuProfile,
  sources: SourceLookup,
  bundleUrlSuffix: string,
): PhaseTimes {
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const decided = new Map<number, { phase: string; hotspot: string }>();
  const decide = (id: number): { phase: string; hotspot: string } => {
    const cached = decided.get(id);
    if (cached) return cached;
    const leaf = nodes.get(id)!.callFrame.functionName || "(anonymous)";
    // Our frames, innermost first, with their source files.
    const ours: Array<{ fn: string; file: string }> = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = nodes.get(at)!.callFrame;
      if (!frame.url.endsWith(bundleUrlSuffix)) continue;
      const file = repoPath(sources.sourceAt(frame.lineNumber, frame.columnNumber));
      if (file && OURS.test(file) && !TRANSPARENT.test(file))
        ours.push({ fn: frame.functionName || "(anonymous)", file });
    }
    const inner = ours[0];
    const hotspot = inner ? `${inner.fn} (${inner.file.replace(/^.*\//, "")}) ← ${leaf}` : leaf;
    let phase: string | undefined;
    for (const rule of RULES.filter((r) => r.fn && !r.file))
      if (!phase && ours.some((frame) => rule.fn!.test(frame.fn))) phase = rule.label;
    if (!phase && inner) {
      const operation = ours.find((frame) =>
        RULES.some((r) => r.fn && !r.file && r.fn.test(frame.fn)),
      );
      phase = operation
        ? RULES.find((r) => r.fn && !r.file && r.fn.test(operation.fn))!.label
        : RULES.find((r) => r.file && r.file.test(inner.file) && (!r.fn || r.fn.test(inner.fn)))
            ?.label;
      phase ??= `other code of ours (${inner.file})`;
    }
    phase ??=
      leaf === "(garbage collector)"
        ? "runtime: garbage collection"
        : "runtime: native, no frame of ours (RPC, I/O, stream plumbing)";
    const result = { phase, hotspot };
    decided.set(id, result);
    return result;
  };
  const byPhase = new Map<string, number>();
  const hotspots = new Map<string, Map<string, number>>();
  let totalMs = 0;
  for (const [id, ms] of selfTimes(profile)) {
    if (nodes.get(id)!.callFrame.functionName === "(idle)") continue;
    const { phase, hotspot } = decide(id);
    byPhase.set(phase, (byPhase.get(phase) ?? 0) + ms);
    const spots = hotspots.get(phase) ?? new Map<string, number>();
    spots.set(hotspot, (spots.get(hotspot) ?? 0) + ms);
    hotspots.set(phase, spots);
    totalMs += ms;
  }
  return { byPhase, hotspots, totalMs };
}

/** The printed table: ms per step for each phase, largest first, and the total. */
export function formatPhases(times: PhaseTimes, steps: number): string[] {
  const rows = [...times.byPhase].sort((a, b) => b[1] - a[1]);
  return [
    ...rows.flatMap(([label, ms]) => [
      `  ${(ms / steps).toFixed(3).padStart(7)} ms/step  ${((100 * ms) / times.totalMs).toFixed(0).padStart(3)}%  ${label}`,
      ...(ms / times.totalMs < 0.05
        ? []
        : [...(times.hotspots.get(label) ?? new Map<string, number>())]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 3)
            .map(([spot, t]) => `                          ${(t / steps).toFixed(3)} ${spot}`)),
    ]),
    `  ${(times.totalMs / steps).toFixed(3).padStart(7)} ms/step  100%  total (sampled, idle excluded)`,
  ];
}
