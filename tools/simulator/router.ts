/**
 * @module Routes each HTTP request to its handler, injects faults on the generation endpoints,
 * and turns thrown errors into vLLM's error bodies.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { handleChatCompletions } from "./chat-completions";
import { handleCompletions } from "./completions";
import type { RequestScope, SimulatorContext } from "./context";
import { SimulatorHttpError } from "./errors";
import { drawFault, injected429, injected500 } from "./faults";
import { checkJsonContentType, readJsonBody, sendError, sendJson } from "./http-io";
import type { SimulatorConfig } from "./options";
import type { Rng } from "./rng";
import { metricsText } from "./engine/metrics-text";
import { SAMPLE_KEY_HEADER } from "./outcome-seed";
import { handleDetokenize, handleTokenize } from "./tokenize";
import type { TokenSource } from "./engine/token-source";
import { handleUpdateWeights } from "./weight-reload";

/** What the router needs from the running simulator. */
export interface RouterState extends SimulatorContext {
  config(): SimulatorConfig;
  /** Applies a `PUT /sim/config` body; throws a RangeError for a bad patch. */
  configure(patch: unknown): SimulatorConfig;
  faultRng(): Rng;
  /** Aborts when the simulator closes. */
  closing: AbortSignal;
  /** Registers a held (timeout-fault) request so close() can release it. */
  hold(req: IncomingMessage, ms: number): void;
  /** Resolves once generations may start: at once, unless a test holds them (VllmSimulator.holdGenerations). */
  gate(): Promise<void>;
  /** The token source the engine asks now. */
  tokenSource(): TokenSource;
}

type Generator = (body: unknown, scope: RequestScope, context: SimulatorContext) => Promise<void>;

const GENERATORS: Record<string, Generator> = {
  "POST /v1/chat/completions": handleChatCompletions,
  "POST /v1/completions": handleCompletions,
};

const KNOWN_PATHS = new Set([
  "/health",
  "/v1/models",
  "/v1/chat/completions",
  "/v1/completions",
  "/tokenize",
  "/detokenize",
  "/sim/stats",
  "/sim/config",
  "/metrics",
  "/update_weights_from_disk",
]);

function modelsBody(config: SimulatorConfig): unknown {
  const created = Math.floor(Date.now() / 1000);
  const permission = {
    id: `modelperm-${randomUUID().replaceAll("-", "")}`,
    object: "model_permission",
    created,
    allow_create_engine: false,
    allow_sampling: true,
    allow_logprobs: true,
    allow_search_indices: false,
    allow_view: true,
    allow_fine_tuning: false,
    organization: "*",
    group: null,
    is_blocking: false,
  };
  const card = {
    id: config.model,
    object: "model",
    created,
    owned_by: "vllm",
    root: config.model,
    parent: null,
    max_model_len: config.maxModelLen,
    permission: [permission],
  };
  return { object: "list", data: [card] };
}

async function generateWithFaults(
  generator: Generator,
  req: IncomingMessage,
  res: ServerResponse,
  state: RouterState,
): Promise<void> {
  const config = state.config();
  const fault = drawFault(config.faults, state.faultRng());
  if (fault === "timeout") {
    state.stats.fault("timeout");
    state.hold(req, config.faults.hangMs);
    return;
  }
  if (fault === "5xx" || fault === "429") {
    state.stats.fault(fault);
    sendError(res, fault === "5xx" ? injected500() : injected429());
    return;
  }
  checkJsonContentType(req);
  const body = await readJsonBody(req);
  const header = req.headers["x-request-id"];
  const requestIdHeader = typeof header === "string" && header !== "" ? header : null;
  const key = req.headers[SAMPLE_KEY_HEADER];
  const sampleKey = typeof key === "string" && key !== "" ? key : null;
  const disconnected = new AbortController();
  res.on("close", () => disconnected.abort());
  const signal = AbortSignal.any([disconnected.signal, state.closing]);
  await state.gate();
  await generator(
    body,
    { res, signal, config, malformed: fault === "malformed", requestIdHeader, sampleKey },
    state,
  );
}

async function route(req: IncomingMessage, res: ServerResponse, state: RouterState): Promise<void> {
  const path = new URL(req.url ?? "/", "http://simulator").pathname;
  const endpoint = `${req.method ?? "GET"} ${path}`;
  state.stats.request(KNOWN_PATHS.has(path) ? endpoint : "other");
  const generator = GENERATORS[endpoint];
  if (generator) return generateWithFaults(generator, req, res, state);
  switch (endpoint) {
    case "GET /health":
      res.writeHead(200, { "content-length": 0 });
      res.end();
      return;
    case "GET /v1/models":
      return sendJson(res, 200, modelsBody(state.config()));
    case "POST /tokenize":
      checkJsonContentType(req);
      return handleTokenize(await readJsonBody(req), res, state.config());
    case "POST /detokenize":
      checkJsonContentType(req);
      return handleDetokenize(await readJsonBody(req), res, state.config());
    case "GET /metrics":
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(metricsText(state.replica.counters(), state.config().model));
      return;
    case "POST /update_weights_from_disk":
      checkJsonContentType(req);
      return handleUpdateWeights(await readJsonBody(req), res, {
        source: state.tokenSource(),
        engine: state.replica,
        setVersion: (policyVersion) => void state.configure({ policyVersion }),
      });
    case "GET /sim/stats":
      return sendJson(res, 200, state.stats.snapshot());
    case "PUT /sim/config":
      try {
        return sendJson(res, 200, state.configure(await readJsonBody(req)));
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        throw new SimulatorHttpError(400, "BadRequestError", error.message);
      }
  }
  // FastAPI's own answers for unknown routes and wrong methods.
  if (KNOWN_PATHS.has(path)) sendJson(res, 405, { detail: "Method Not Allowed" });
  else sendJson(res, 404, { detail: "Not Found" });
}

/** A node:http request listener for the simulator. */
export function createRouter(
  state: RouterState,
): (req: IncomingMessage, res: ServerResponse) => void {
  return function vllmSimulatorRouter(req, res) {
    route(req, res, state).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof SimulatorHttpError) return sendError(res, error);
      sendError(
        res,
        new SimulatorHttpError(
          500,
          "InternalServerError",
          error instanceof Error ? error.message : String(error),
        ),
      );
    });
  };
}
