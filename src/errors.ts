/** @module One error hierarchy: each error knows its HTTP status and a stable code. */

/** Base of every error this project throws on purpose. `code` is stable; `status` is the HTTP status. */
export class AppError extends Error {
  override name = "AppError";
  readonly code: string = "internal";
  readonly status: number = 500;
  /** Field-level details, e.g. zod issues, rendered into problem+json. */
  readonly details: unknown;

  constructor(message: string, options: { cause?: unknown; details?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.details = options.details;
  }
}

/** The caller sent something malformed (400) or semantically invalid (422). */
export class InvalidInputError extends AppError {
  override name = "InvalidInputError";
  override readonly code: string = "invalid_input";
  override readonly status: number;
  constructor(
    message: string,
    options: { status?: 400 | 422; details?: unknown; cause?: unknown } = {},
  ) {
    super(message, options);
    this.status = options.status ?? 422;
  }
}

/** The caller is not authenticated (401) or not allowed (403). */
export class UnauthorizedError extends AppError {
  override name = "UnauthorizedError";
  override readonly code: string = "unauthorized";
  override readonly status: number;
  constructor(message: string, status: 401 | 403 = 401) {
    super(message);
    this.status = status;
  }
}

/** The request body is larger than the route accepts (413); `limit` is the accepted maximum in bytes. */
export class PayloadTooLargeError extends AppError {
  override name = "PayloadTooLargeError";
  override readonly code = "payload_too_large";
  override readonly status = 413;
  readonly limit: number;
  constructor(message: string, limit: number) {
    super(message, { details: [{ path: "(body)", message }] });
    this.limit = limit;
  }
}

/**
 * The deployment is missing a secret it needs to be safe (503): it refuses requests rather than
 * serve them open. Fixed by configuration, not by the caller.
 */
export class InsecureDeploymentError extends AppError {
  override name = "InsecureDeploymentError";
  override readonly code = "insecure_deployment";
  override readonly status = 503;
}

/**
 * A deployment variable does not say what it must (503): every route that depends on it refuses
 * requests, naming the variable, rather than guessing a value (e.g. `FEED_SHARDS`).
 */
export class MisconfiguredError extends AppError {
  override name = "MisconfiguredError";
  override readonly code = "misconfigured";
  override readonly status = 503;
}

/** The named thing does not exist (404). */
export class NotFoundError extends AppError {
  override name = "NotFoundError";
  override readonly code = "not_found";
  override readonly status = 404;
}

/** The route cannot answer in any media type the request's `Accept` allows (406); `details` lists those it can. */
export class NotAcceptableError extends AppError {
  override name = "NotAcceptableError";
  override readonly code = "not_acceptable";
  override readonly status = 406;
}

/** The request conflicts with current state, e.g. cancelling a finished rollout (409). */
export class ConflictError extends AppError {
  override name = "ConflictError";
  override readonly code = "conflict";
  override readonly status = 409;
}

/**
 * The model server failed or answered something unusable (502; 504 for timeouts), or refused the
 * request itself (`clientStatus`: the upstream's own 400/413/422, passed on so OpenAI clients,
 * which retry 502, do not resend a request that can never succeed). `retryable` is decided from
 * the HTTP status or the transport failure, never from message text.
 */
export class ModelError extends AppError {
  override name = "ModelError";
  override readonly code: string;
  override readonly status: number;
  readonly retryable: boolean;
  readonly upstreamStatus: number | null;
  /** Seconds the upstream asked us to wait (Retry-After), if it said. */
  readonly retryAfterSeconds: number | null;

  constructor(
    message: string,
    options: {
      retryable: boolean;
      upstreamStatus?: number | null;
      timeout?: boolean;
      clientStatus?: 400 | 413 | 422;
      retryAfterSeconds?: number | null;
      cause?: unknown;
    },
  ) {
    super(message, { cause: options.cause });
    this.retryable = options.retryable;
    this.upstreamStatus = options.upstreamStatus ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
    this.status = options.clientStatus ?? (options.timeout ? 504 : 502);
    this.code = options.clientStatus ? "upstream_rejected_request" : "model_error";
  }
}

/** User agent or environment code threw; recorded on the rollout as a failed episode, never a 500. */
export class UserCodeError extends AppError {
  override name = "UserCodeError";
  override readonly code = "user_code_error";
  override readonly status = 500;
  readonly source: "agent" | "env";
  constructor(source: "agent" | "env", message: string, cause: unknown) {
    super(message, { cause });
    this.source = source;
  }
}

/** A short, safe description of anything thrown, for termination records. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 2000);
  return String(error).slice(0, 2000);
}

/** A model call the rollout's limits do not allow; it was not forwarded. `reason` is how the rollout ends. */
export class LimitExceededError extends AppError {
  override name = "LimitExceededError";
  override readonly code: string;
  override readonly status = 400;
  readonly reason: "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH";
  constructor(reason: "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH", message: string) {
    super(message);
    this.reason = reason;
    this.code = reason.toLowerCase();
  }
}

/**
 * The rollout can no longer be trained: the policy version moved more than its training mode's
 * `max_staleness` past its oldest token's (src/training/staleness.ts). Its session has ended it
 * STALE; the call that found out is refused (409) instead of generating tokens nobody trains.
 */
export class StaleRolloutError extends AppError {
  override name = "StaleRolloutError";
  override readonly code = "rollout_stale";
  override readonly status = 409;
}

/** The trainer is syncing weights: model calls are refused until it ends (429 with Retry-After). */
export class PolicySyncingError extends AppError {
  override name = "PolicySyncingError";
  override readonly code = "policy_syncing";
  override readonly status = 429;
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(`weights are being synced; retry after ${retryAfterSeconds} s`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A caller over its rate limit (429 with Retry-After): an application key's per-key budget (docs/online.md). */
export class RateLimitedError extends AppError {
  override name = "RateLimitedError";
  override readonly code = "rate_limited";
  override readonly status = 429;
  readonly retryAfterSeconds: number;
  constructor(
    retryAfterSeconds: number,
    message = `rate limit exceeded; retry after ${retryAfterSeconds} s`,
  ) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
