/**
 * @module The local stack a bench runs against, on either runner, with the CPU accounting each
 * allows: Miniflare's own API (one workerd process, no proxy; the default) or `wrangler dev`
 * (a Node proxy and a proxy workerd in front of the Worker's workerd; kept to compare).
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startLocalStack } from "../../scripts/local-stack";
import { startMiniflareStack } from "../../scripts/miniflare-stack";
import { connectProfiler, type CpuProfile } from "./cpu-profile";
import { treeCpuByName } from "./process-cpu";
import { type R2Stored, r2Stored } from "./r2-bytes";
import { findWorkerSocket } from "./worker-socket";

/** Which local runner. */
export type StackKind = "miniflare" | "wrangler";

/** CPU ms used so far by the Worker's workerd, and by dev tooling that production does not have. */
export interface StackCpu {
  worker: number;
  tooling: number;
}

/** A running bench stack. */
export interface BenchStack {
  kind: StackKind;
  workerUrl: string;
  /** A URL that reaches the Worker without any dev proxy (the same as `workerUrl` on Miniflare). */
  directUrl: string;
  cpu(): StackCpu;
  /** Profiles the Worker's isolate while `work` runs (Miniflare only; null elsewhere). */
  profile<T>(work: () => Promise<T>): Promise<{ result: T; profile: CpuProfile } | null>;
  /** The bundle profiles refer to (Miniflare only). */
  bundlePath: string | null;
  /** R2 objects and body bytes stored so far (Miniflare; null on wrangler, whose state layout is its own). */
  r2Stored(): R2Stored | null;
  /** Resolves, with why, if the Worker's runtime ends on its own (Miniflare; never on wrangler). */
  ended: Promise<string>;
  stop(): Promise<void>;
}

/** What every bench passes: where the model server is, the port, the state dir, the local batch size. */
export interface BenchStackOptions {
  kind: StackKind;
  modelServerUrl: string;
  port: number;
  /** A name for the state dir (under /dev/shm when there is one, else .tmp). */
  stateDir: string;
  localBatchSize?: number;
  verbose?: boolean;
  /** Extra Worker variables (e.g. `FEED_SHARDS`). */
  vars?: Record<string, string>;
}

/**
 * Where a bench keeps its state: on tmpfs when the machine has one. Every Durable Object is a
 * SQLite file locally, and each write outside a transaction is a commit with an fsync; on a disk
 * those fsyncs block the one workerd thread that runs every object locally, which production
 * (objects on their own threads, storage writes acknowledged asynchronously behind output gates)
 * does not have. On tmpfs an fsync costs nothing, so the bench measures the Worker's own work.
 */
export function benchStateDir(name: string): string {
  return existsSync("/dev/shm")
    ? `/dev/shm/edge-rollout-${name}-${process.pid}`
    : `.tmp/${name}/state`;
}

/** Starts the stack `options.kind` names, with fresh state (deleted again on stop when on tmpfs). */
export async function startBenchStack(options: BenchStackOptions): Promise<BenchStack> {
  const stateDir = benchStateDir(options.stateDir);
  const common = {
    workerPort: options.port,
    modelServerUrl: options.modelServerUrl,
    reset: true,
    localBatchSize: options.localBatchSize,
    vars: options.vars,
  };
  const cleanUp = () => {
    if (stateDir.startsWith("/dev/shm/")) rmSync(stateDir, { recursive: true, force: true });
  };
  if (options.kind === "miniflare") {
    const stack = await startMiniflareStack({
      ...common,
      stateDir: `.tmp/${options.stateDir}`,
      persistRoot: join(stateDir, "v3"),
      inspector: true,
      verbose: options.verbose,
    }).catch((error: unknown) => {
      cleanUp();
      throw error;
    });
    const pid = stack.workerdPid;
    return {
      kind: "miniflare",
      workerUrl: stack.workerUrl,
      directUrl: stack.workerUrl,
      cpu: () => ({ worker: pid ? (treeCpuByName(pid).workerd ?? 0) : Number.NaN, tooling: 0 }),
      async profile(work) {
        if (!stack.inspectorUrl) return null;
        const profiler = await connectProfiler(stack.inspectorUrl, "edge-rollout");
        try {
          await profiler.start();
          const result = await work();
          return { result, profile: await profiler.stop() };
        } finally {
          profiler.close();
        }
      },
      bundlePath: stack.bundlePath,
      r2Stored: () => r2Stored(join(stateDir, "v3")),
      get ended() {
        return stack.ended;
      },
      stop: () => stack.stop().finally(cleanUp),
    };
  }
  const stack = await startLocalStack({ ...common, stateDir, verbose: options.verbose }).catch(
    (error: unknown) => {
      cleanUp();
      throw error;
    },
  );
  const socket = await findWorkerSocket(stack.wrangler.pid!, options.port);
  return {
    kind: "wrangler",
    workerUrl: stack.workerUrl,
    directUrl: socket?.url ?? stack.workerUrl,
    cpu: () => {
      const all = Object.values(treeCpuByName(stack.wrangler.pid!)).reduce((a, b) => a + b, 0);
      const worker = socket ? (treeCpuByName(socket.pid).workerd ?? 0) : Number.NaN;
      return { worker, tooling: all - worker };
    },
    profile: async () => null,
    bundlePath: null,
    r2Stored: () => null,
    ended: new Promise<string>(() => undefined),
    stop: () => stack.stop().finally(cleanUp),
  };
}
