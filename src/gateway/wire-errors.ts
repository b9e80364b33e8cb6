/**
 * @module Errors crossing a Durable Object RPC boundary. RPC keeps an error's message but not
 * its class or fields, so the object that owns a gateway call answers an error as data and the
 * route raises it again with the same HTTP status, code and Retry-After.
 */
import { AppError, PolicySyncingError } from "../errors";

/** An error as data: what `problemResponse` needs to answer it. */
export interface WireError {
  name: string;
  code: string;
  status: number;
  message: string;
  details?: unknown;
  retryAfterSeconds?: number;
}

/** An AppError raised again from its wire form (its name, code and status as sent). */
class RemoteAppError extends AppError {
  override readonly code: string;
  override readonly status: number;
  constructor(wire: WireError) {
    super(wire.message, { details: wire.details });
    this.name = wire.name;
    this.code = wire.code;
    this.status = wire.status;
  }
}

/** `error` as data; anything that is not an AppError becomes an opaque 500 (logged here). */
export function toWireError(error: unknown): WireError {
  if (error instanceof PolicySyncingError)
    return {
      name: error.name,
      code: error.code,
      status: error.status,
      message: error.message,
      retryAfterSeconds: error.retryAfterSeconds,
    };
  if (error instanceof AppError)
    return {
      name: error.name,
      code: error.code,
      status: error.status,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
    };
  console.error("gateway call failed", error);
  return { name: "InternalError", code: "internal", status: 500, message: "internal error" };
}

/** The error to throw for `wire`. */
export function fromWireError(wire: WireError): AppError {
  if (wire.retryAfterSeconds !== undefined) return new PolicySyncingError(wire.retryAfterSeconds);
  return new RemoteAppError(wire);
}
