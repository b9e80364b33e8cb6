/**
 * @module Finding the Worker's own socket under `wrangler dev` (Linux /proc), to measure the
 * local proxy hop. `wrangler dev` runs two workerd processes: a proxy that owns the public port
 * and forwards every request to a second workerd that runs the Worker. Production has no such
 * proxy, so the bench calls the gateway both ways and reports the difference.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** The workerd process that runs the Worker, and a URL that reaches it without the dev proxy. */
export interface WorkerSocket {
  pid: number;
  url: string;
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** Live descendants of `rootPid` whose command name is `name`. */
function descendantsNamed(rootPid: number, name: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let comm = "";
    try {
      comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    } catch {
      continue;
    }
    if (comm !== name) continue;
    for (let p: number | null = parentOf(pid); p !== null && p > 1; p = parentOf(p)) {
      if (p === rootPid) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

/** Ports `pid` listens on at 127.0.0.1, from its socket inodes and /proc/net/tcp. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    }
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    // fields: sl local_address rem_address st ... inode (index 9); st 0A = LISTEN; 0100007F = 127.0.0.1
    if (fields[3] === "0A" && fields[1]?.startsWith("0100007F:") && inodes.has(fields[9] ?? ""))
      ports.push(parseInt(fields[1].split(":")[1]!, 16));
  }
  return ports;
}

/**
 * The Worker's workerd and its entry socket: the listening port (other than the public one)
 * that answers `GET /health` with 200. Null when not found (not Linux, or wrangler changed).
 */
export async function findWorkerSocket(
  wranglerPid: number,
  publicPort: number,
): Promise<WorkerSocket | null> {
  for (const pid of descendantsNamed(wranglerPid, "workerd")) {
    const ports = listeningPorts(pid);
    if (ports.includes(publicPort)) continue; // the dev proxy
    for (const port of ports) {
      const url = `http://127.0.0.1:${port}`;
      try {
        const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) });
        if (response.ok && ((await response.json()) as { ok?: unknown }).ok === true)
          return { pid, url };
      } catch {
        // not the entry socket (inspector, loopback service, …)
      }
    }
  }
  return null;
}

/**
 * Round trips of `GET /health` (no Durable Object, no model call) through the public port and
 * straight to the Worker's socket, alternating one by one so both see the same machine state.
 */
export async function healthRoundTrips(
  publicUrl: string,
  directUrl: string,
  count: number,
): Promise<{ viaProxyMs: number[]; directMs: number[] }> {
  const viaProxyMs: number[] = [];
  const directMs: number[] = [];
  const time = async (url: string) => {
    const start = performance.now();
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`GET ${url}/health answered ${response.status}`);
    return performance.now() - start;
  };
  for (let i = 0; i < count; i++) {
    viaProxyMs.push(await time(publicUrl));
    directMs.push(await time(directUrl));
  }
  return { viaProxyMs, directMs };
}
