/** @module What every endpoint handler gets: the live config, counters, and its own request. */
import type { ServerResponse } from "node:http";
import type { InterruptedGenerations } from "./continuation";
import type { SimulatorConfig } from "./options";
import type { EngineLoop } from "./engine/engine-loop";
import type { StatsRecorder } from "./stats";

/** Server-wide state shared by handlers. */
export interface SimulatorContext {
  /** Counters for `/sim/stats`. */
  stats: StatsRecorder;
  /** Next per-server request number (varies outcomes of requests without a seed). */
  nextRequestNumber(): number;
  /** This server as a KV-cache source: what a prefill-role answer puts in `kv_transfer_params`. */
  engine(): PdEngine;
  /** Seeds of generations a closed connection aborted, for resuming them from token ids. */
  interrupted: InterruptedGenerations;
  /** This replica's engine: its step loop, KV cache and token source serve every generation. */
  replica: EngineLoop;
}

/** Identity of one simulated engine in the prefill/decode handshake. */
export interface PdEngine {
  /** Stable for the server's lifetime, like vLLM's engine id. */
  engineId: string;
  host: string;
  /** The bound port (the real one, also when started with port 0). */
  port: number;
}

/** One request being answered. */
export interface RequestScope {
  res: ServerResponse;
  /** Aborts when the client disconnects or the simulator closes. */
  signal: AbortSignal;
  /** Config as it was when the request arrived, so a concurrent `configure()` cannot tear it. */
  config: SimulatorConfig;
  /** Answer with a broken body (an injected "malformed" fault). */
  malformed: boolean;
  /**
   * The request's `X-Request-Id` header, or null. vLLM's response id is `chatcmpl-<it>` /
   * `cmpl-<it>` when set (OpenAIServing._base_request_id), else the body's `request_id`, else random.
   */
  requestIdHeader: string | null;
  /** The request's sample key (`x-sample-key`), or null: it picks the outcome (outcome-seed.ts). */
  sampleKey: string | null;
}
