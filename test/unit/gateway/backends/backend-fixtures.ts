/** Shared helpers for the backend tests: a movable clock, scripted upstreams, and chat bodies. */
import { type IncomingHttpHeaders, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ModelError } from "../../../../src/errors";
import type { BackendDeps } from "../../../../src/gateway/backends";
import type { JsonObject } from "../../../../src/schemas/json";

/** A call's limits that never bind in a wire test: a long context, 256 tokens of response. */
export const ROOMY_LIMITS = {
  max_prompt_length: 131072,
  max_response_length: 256,
  max_tokens_per_call: null,
  completion_tokens_used: 0,
  last_context_tokens: 0,
  last_context_messages: 0,
};

/** A clock tests move by hand, so health cooldowns pass without sleeping. */
export function manualClock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let time = start;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

/** Backend deps over the real fetch and `now`. */
export function depsWith(now: () => number): BackendDeps {
  return { fetch: (input, init) => fetch(input, init), now };
}

/** A small chat body as the recording client builds it in train mode. */
export function chatBody(text: string, extra: JsonObject = {}): JsonObject {
  return {
    model: "sim-qwen3",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: text },
    ],
    max_tokens: 24,
    temperature: 1,
    top_p: 1,
    seed: 11,
    return_token_ids: true,
    logprobs: true,
    top_logprobs: 0,
    ...extra,
  };
}

/** What a scripted upstream saw. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A loopback server answering every request with `reply`, recording each request. */
export async function startScriptedUpstream(reply: {
  status: number;
  headers?: Record<string, string>;
  body: string;
}) {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      });
      res
        .writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
        .end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The rejection of `promise`, asserted to be a ModelError. */
export async function modelFailure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ModelError))
    throw new Error(`expected a ModelError, got ${String(error)}`);
  return error;
}

/** Reads an SSE body into its `data:` payloads. */
export async function ssePayloads(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((event) => event.startsWith("data: "))
    .map((event) => event.slice("data: ".length));
}
