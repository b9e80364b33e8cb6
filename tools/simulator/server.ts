/** @module Starting and stopping the vLLM simulator's HTTP server. */
import { randomUUID } from "node:crypto";
import { type IncomingMessage, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { PdEngine } from "./context";
import { InterruptedGenerations } from "./continuation";
import { harnessTasksIn } from "./harness-tasks";
import type { z } from "zod";
import {
  type SimulatorConfig,
  type SimulatorConfigPatch,
  type VllmSimulatorOptions,
  applyPatch,
  parseConfigPatch,
  resolveOptions,
} from "./options";
import { type Rng, createRng, hashParts } from "./rng";
import { EngineLoop } from "./engine/engine-loop";
import { createExternalSource } from "./engine/external-token-source";
import { type TokenSource, createScriptedSource } from "./engine/token-source";
import { createRouter } from "./router";
import type { TokenizerName } from "./sim-tokenizer";
import { tokenizerFor } from "./tokenizer-registry";
import { type SimulatorStats, createStatsRecorder } from "./stats";

/** A running simulator. */
export interface VllmSimulator {
  /** Base URL without `/v1`, e.g. `"http://127.0.0.1:8000"`. */
  url: string;
  /** The port actually bound (useful with `port: 0`). */
  port: number;
  /** The vocabulary and chat template served at start ("qwen3" or "toy"; `configure` may change it). */
  tokenizer: TokenizerName;
  /** Stops listening, drops open connections (including held timeout faults), and resolves when closed. */
  close(): Promise<void>;
  /** A snapshot of request, fault and token counters. */
  stats(): SimulatorStats;
  /**
   * Changes behaviour for requests that arrive afterwards; `latency` and `faults` merge field by
   * field. Throws a RangeError naming the field for bad values, or for host/port, which cannot change.
   */
  configure(patch: z.input<typeof SimulatorConfigPatch>): void;
  /**
   * Holds every generation request from now on, after it is counted in stats, until the returned
   * function is called (or the simulator closes): a test makes calls overlap for certain, however
   * slowly they arrive, instead of racing a long time to first token.
   */
  holdGenerations(): () => void;
}

/**
 * Starts a vLLM-compatible server on loopback with a scripted model.
 *
 * @example
 * const sim = await startVllmSimulator({ port: 0, seed: 1, successRate: 1 });
 * const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "unused" });
 * await sim.close();
 */
export async function startVllmSimulator(
  options: VllmSimulatorOptions = {},
): Promise<VllmSimulator> {
  let config: SimulatorConfig = resolveOptions(options);
  // Loaded now, so a bad task directory fails the start rather than the first harness request.
  if (config.harnessTasks !== null) harnessTasksIn(config.harnessTasks);
  // Built now (once per process), so the first request does not pay for it; after yielding once,
  // so a caller that starts other processes beside the simulator (the dev stack's sandbox host)
  // has spawned them before this second of CPU blocks the thread.
  await new Promise((resolve) => setImmediate(resolve));
  tokenizerFor(config.tokenizer);
  let faultRng: Rng = createRng(hashParts(config.seed, "faults"));
  let requestNumber = 0;
  const recorder = createStatsRecorder();
  const scripted = createScriptedSource();
  let external: { url: string; source: TokenSource } | null = null;
  // The source is chosen per step from the live config, so `configure` can switch it.
  const source = (): TokenSource => {
    const url = config.engine.tokenSourceUrl;
    if (url === null) return scripted;
    if (external?.url !== url) external = { url, source: createExternalSource(url) };
    return external.source;
  };
  const replica = new EngineLoop(() => config, source);
  const stats = {
    ...recorder,
    snapshot: () => ({ ...recorder.snapshot(), replica: replica.counters() }),
  };
  const closing = new AbortController();
  const held = new Set<IncomingMessage>();
  // Generations wait on this while a test holds them (holdGenerations); null when none does.
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  const openGate = () => {
    gate?.open();
    gate = null;
  };
  // The port is filled in once bound; requests cannot arrive before that.
  const engine: PdEngine = {
    engineId: `sim-${randomUUID()}`,
    host: config.host,
    port: config.port,
  };

  const configure = (patch: unknown): SimulatorConfig => {
    if (typeof patch === "object" && patch !== null && ("host" in patch || "port" in patch)) {
      throw new RangeError(
        "invalid vLLM simulator config patch: host and port cannot change after the simulator starts",
      );
    }
    const parsed = parseConfigPatch(patch);
    const next = applyPatch(config, parsed);
    if (next.harnessTasks !== null) harnessTasksIn(next.harnessTasks);
    if (next.seed !== config.seed) faultRng = createRng(hashParts(next.seed, "faults"));
    config = next;
    return config;
  };

  const server = createServer(
    createRouter({
      config: () => config,
      configure,
      faultRng: () => faultRng,
      stats,
      nextRequestNumber: () => requestNumber++,
      engine: () => engine,
      interrupted: new InterruptedGenerations(),
      replica,
      closing: closing.signal,
      gate: () => gate?.promise ?? Promise.resolve(),
      tokenSource: source,
      hold(req, ms) {
        held.add(req);
        const timer = setTimeout(() => req.socket.destroy(), ms);
        timer.unref();
        req.socket.once("close", () => {
          clearTimeout(timer);
          held.delete(req);
        });
      },
    }),
  );
  // Agent loops keep connections alive between turns; Node's default 5 s would drop them mid-rollout.
  server.keepAliveTimeout = 60_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  engine.port = port;
  let closed: Promise<void> | undefined;
  const hostInUrl = config.host.includes(":") ? `[${config.host}]` : config.host;

  return {
    url: `http://${hostInUrl}:${port}`,
    port,
    tokenizer: config.tokenizer,
    stats: () => stats.snapshot(),
    configure(patch) {
      configure(patch);
    },
    holdGenerations() {
      if (gate === null) {
        let open = () => {};
        const promise = new Promise<void>((resolve) => (open = resolve));
        gate = { promise, open };
      }
      return openGate;
    },
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        closing.abort();
        openGate();
        replica.close();
        for (const req of held) req.socket.destroy();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
