/** @module Finding the workerd processes this Node process started (Miniflare does not expose their pids). */
import { readdirSync, readFileSync } from "node:fs";

/** Children of this process named `workerd` (Miniflare starts exactly one per instance). */
export function workerdChildren(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (name === "workerd" && ppid === process.pid) found.push(pid);
    } catch {
      // gone, or not Linux
    }
  }
  return found;
}
