/** @module Reading JSON requests and writing JSON, SSE and vLLM error responses with node:http. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import type { z } from "zod";
import { type SimulatorHttpError, requestValidationError, schemaError } from "./errors";

/** Reads the whole body; an empty body reads as `{}` so schema errors name the missing fields. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw requestValidationError(
      [{ type: "json_invalid", loc: ["body", 0], msg: "JSON decode error" }],
      null,
    );
  }
}

/**
 * vLLM's `validate_json_request` dependency (vllm/entrypoints/openai/utils.py): generation and
 * tokenize routes refuse any media type but application/json (a missing header included) with 400.
 */
export function checkJsonContentType(req: IncomingMessage): void {
  const mediaType = (req.headers["content-type"] ?? "").toLowerCase().split(";", 1)[0]?.trim();
  if (mediaType !== "application/json") {
    throw requestValidationError(
      [
        {
          type: "value_error",
          loc: ["header", "content-type"],
          msg: "Unsupported Media Type: Only 'application/json' is allowed",
        },
      ],
      null,
    );
  }
}

/** `schema.parse` that fails with vLLM's 400 body instead of a ZodError. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw schemaError(parsed.error);
  return parsed.data;
}

/** Sends a JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** Sends a vLLM error body with its status. */
export function sendError(res: ServerResponse, error: SimulatorHttpError): void {
  sendJson(res, error.status, error.toBody());
}

/** Waits `ms` without blocking the event loop; resolves false (early) if `signal` aborts. */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  try {
    await delay(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/** A server-sent-events writer in vLLM's framing: `data: {json}\n\n`, ended by `data: [DONE]`. */
export interface SseWriter {
  /** Sends one event; false once the client is gone. */
  send(data: unknown): boolean;
  /** Sends a raw line as an event body (used to inject a broken event). */
  sendRaw(text: string): boolean;
  /** Sends `data: [DONE]` and ends the response. */
  done(): void;
  /** Ends the response without `[DONE]`. */
  abort(): void;
}

/** Starts an SSE response. */
export function startSse(res: ServerResponse): SseWriter {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const write = (text: string): boolean => {
    if (res.destroyed || res.writableEnded) return false;
    res.write(`data: ${text}\n\n`);
    return true;
  };
  return {
    send: (data) => write(JSON.stringify(data)),
    sendRaw: (text) => write(text),
    done() {
      write("[DONE]");
      if (!res.writableEnded) res.end();
    },
    abort() {
      if (!res.writableEnded) res.end();
    },
  };
}
