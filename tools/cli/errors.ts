/** @module What a CLI command can fail with, and the process exit code each failure means. */

/**
 * Exit codes of `edge-rollout`: 0 the command did what it was asked; 1 the operation failed (the
 * server refused it, a batch was cancelled elsewhere, a check failed); 2 the command line is wrong;
 * 3 the server could not be reached; 130 the user interrupted it (Ctrl-C), as shells report SIGINT.
 */
export const ExitCode = { ok: 0, failure: 1, usage: 2, unreachable: 3, interrupted: 130 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Base of every error a command throws on purpose: its message is for people, `exitCode` for scripts. */
export class CliError extends Error {
  override name = "CliError";
  readonly exitCode: ExitCode;
  /** Machine-readable details (the server's field problems, a dataset's bad rows). */
  readonly details: unknown;
  /** What to do about it, printed after the message. */
  readonly hint: string | undefined;

  constructor(
    message: string,
    exitCode: ExitCode,
    options: { cause?: unknown; details?: unknown; hint?: string } = {},
  ) {
    super(message, { cause: options.cause });
    this.exitCode = exitCode;
    this.details = options.details;
    this.hint = options.hint;
  }
}

/** The command line is wrong: a missing or malformed option, a file that does not exist (exit 2). */
export class UsageError extends CliError {
  override name = "UsageError";
  constructor(message: string, options: { hint?: string } = {}) {
    super(message, ExitCode.usage, options);
  }
}

/** The operation failed: the server answered with an error, or the input was refused (exit 1). */
export class OperationError extends CliError {
  override name = "OperationError";
  /** The HTTP status when the server refused, else undefined. */
  readonly status: number | undefined;
  constructor(
    message: string,
    options: { status?: number; details?: unknown; hint?: string; cause?: unknown } = {},
  ) {
    super(message, ExitCode.failure, options);
    this.status = options.status;
  }
}

/** No answer from the server: connection refused, unknown host, timeout (exit 3). */
export class UnreachableError extends CliError {
  override name = "UnreachableError";
  constructor(url: string, cause: unknown) {
    super(`cannot reach ${url} (${describeCause(cause)})`, ExitCode.unreachable, {
      cause,
      hint: "is the stack running? Start it with `npx edge-rollout dev`, or pass --url / set EDGE_ROLLOUT_URL",
    });
  }
}

/** The user stopped the command (Ctrl-C); what happened to the work is in the message (exit 130). */
export class InterruptedError extends CliError {
  override name = "InterruptedError";
  constructor(message: string, details?: unknown) {
    super(message, ExitCode.interrupted, { details });
  }
}

/** A short reason for a failed fetch: the system error code when there is one (ECONNREFUSED), else the error's name. */
export function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = cause.cause as { code?: unknown } | undefined;
    if (inner && typeof inner.code === "string") return inner.code;
    if (cause.name === "TimeoutError" || cause.name === "AbortError") return "timed out";
    return cause.message;
  }
  return String(cause);
}
