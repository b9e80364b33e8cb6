/**
 * @module A V8 CPU profile of the Worker's isolate in workerd, taken over DevTools (the inspector
 * Miniflare opens, scripts/miniflare-stack.ts): every Durable Object of the Worker runs in the
 * same isolate locally, so one profile holds the driver, the sessions and the shards.
 */
import WebSocket from "ws";

/** One node of a V8 `Profiler.Profile`. */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

/** V8's `Profiler.Profile`: a call tree, and which node was on top at each sample. */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds since the previous sample. */
  timeDeltas: number[];
}

/** A profiling session on one isolate. */
export interface Profiler {
  start(): Promise<void>;
  stop(): Promise<CpuProfile>;
  close(): void;
}

/** The DevTools target of the Worker named `workerName` on the inspector at `inspectorUrl`. */
async function targetUrl(inspectorUrl: URL, workerName: string): Promise<string> {
  const listing = new URL("/json", inspectorUrl.href.replace(/^ws/, "http"));
  const targets = (await (await fetch(listing)).json()) as {
    id: string;
    title?: string;
    webSocketDebuggerUrl?: string;
  }[];
  const target =
    targets.find((t) => t.id.endsWith(workerName) || t.title?.includes(workerName)) ??
    targets.find((t) => !t.id.includes("miniflare")) ??
    targets[0];
  if (!target?.webSocketDebuggerUrl)
    throw new Error(
      `no inspector target for ${workerName} at ${listing.href}: ${JSON.stringify(targets)}`,
    );
  return target.webSocketDebuggerUrl;
}

/**
 * Connects to the Worker's isolate. `intervalUs` is V8's sampling interval (default 200 µs: fine
 * enough for a step's few milliseconds, coarse enough not to slow the isolate much).
 */
export async function connectProfiler(
  inspectorUrl: URL,
  workerName: string,
  intervalUs = 200,
): Promise<Profiler> {
  const socket = new WebSocket(await targetUrl(inspectorUrl, workerName));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let nextId = 1;
  const pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id!);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  });
  const send = <T>(method: string, params: object = {}) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: intervalUs });
  return {
    start: () => send("Profiler.start"),
    stop: async () => (await send<{ profile: CpuProfile }>("Profiler.stop")).profile,
    close: () => socket.close(),
  };
}

/** Self time (ms) per node id: the time attributed to each sample goes to the node on top. */
export function selfTimes(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  // timeDeltas[i] is the time *before* sample i; the time a sample stands for is the next delta.
  for (let i = 0; i < profile.samples.length; i++) {
    const us = profile.timeDeltas[i + 1] ?? 0;
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + us / 1000);
  }
  return self;
}
