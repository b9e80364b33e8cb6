/** @module CPU time of a process tree, by process name, read from /proc (Linux). */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface ProcStat {
  name: string;
  ppid: number;
  ticks: number;
}

function statOf(pid: number): ProcStat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may contain spaces; fields follow the last ")".
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { name, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** User + system CPU milliseconds used so far by `rootPid` and its live descendants, summed per process name. */
export function treeCpuByName(rootPid: number): Record<string, number> {
  const children = new Map<number, number[]>();
  const stats = new Map<number, ProcStat>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = statOf(pid);
    if (!stat) continue;
    stats.set(pid, stat);
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  }
  const totals: Record<string, number> = {};
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    const stat = stats.get(pid);
    if (stat) totals[stat.name] = (totals[stat.name] ?? 0) + (stat.ticks * 1000) / TICKS_PER_SECOND;
    queue.push(...(children.get(pid) ?? []));
  }
  return totals;
}

/** The CPU milliseconds each process name used between two `treeCpuByName` readings. */
export function cpuDelta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([name, ms]) => [name, ms - (before[name] ?? 0)]),
  );
}

/**
 * Waits until a process is quiet: less than `idleMs` of CPU in a `windowMs` window (at most
 * `maxMs`). A rollout's end event comes before its publication (R2 writes, result message) is
 * done, so a run's CPU is read after the work it caused has settled, not at its last end event.
 */
export async function untilQuiet(
  cpuMs: () => number,
  windowMs = 200,
  idleMs = 10,
  maxMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    const before = cpuMs();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    if (cpuMs() - before < idleMs) return;
  }
}
