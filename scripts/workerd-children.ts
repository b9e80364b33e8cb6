/** @module Finding the workerd processes this Node process started (Miniflare does not expose their pids). */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

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

/**
 * The pid of this process's workerd child that listens on 127.0.0.1:`port` (a Miniflare instance's
 * entry socket), found through /proc/net/tcp and the children's socket fds. Unlike a before/after
 * diff of `workerdChildren()` it cannot pick another instance's workerd started at the same time.
 */
export function workerdListeningOn(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is "HEXIP:HEXPORT"; state 0A is LISTEN; field 9 is the socket's inode.
      if (
        fields.length > 9 &&
        Number.parseInt(fields[1]!.split(":")[1] ?? "", 16) === port &&
        fields[3] === "0A"
      )
        inodes.add(fields[9]!);
    }
  }
  for (const pid of workerdChildren()) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (inodes.has(target.slice("socket:[".length, -1))) return pid;
      }
    } catch {
      // gone
    }
  }
  return undefined;
}
