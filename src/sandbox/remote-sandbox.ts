/**
 * @module A CodeSandbox reached over HTTP: the local sandbox host (scripts/sandbox-host.ts), a
 * separate workerd the stack kills and restarts when a snippet runs away, so the Worker that asked
 * keeps running. It answers `POST /run` with the validated call and a RunCodeResult.
 */
import { AppError } from "../errors";
import { type CodeSandbox, type RunCodeInput, RunCodeResult } from "../schemas/run-code";

/**
 * Extra wall time the host may take beyond a call's timeout: its own deadline, and the wait for a
 * free sandbox process (each runs one call at a time; under a 128-rollout batch with looping
 * answers calls queued for over 15 s on a loaded 2-core machine).
 */
const HOST_ALLOWANCE_MS = 120_000;

/** The sandbox host did not answer (down, or answered something that is not a result): infrastructure, not the snippet. */
export class SandboxUnavailableError extends AppError {
  override name = "SandboxUnavailableError";
  override readonly code = "sandbox_unavailable";
  override readonly status = 503;
}

/** A sandbox that posts each call to `${baseUrl}/run` with `fetchFn` (default: the global fetch). */
export function createRemoteSandbox(baseUrl: string, fetchFn: typeof fetch = fetch): CodeSandbox {
  const url = `${baseUrl.replace(/\/+$/, "")}/run`;
  return {
    async run(input: RunCodeInput): Promise<RunCodeResult> {
      let response: Response;
      try {
        response = await fetchFn(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(input),
          signal: AbortSignal.timeout(input.timeoutMs + HOST_ALLOWANCE_MS),
        });
      } catch (error) {
        throw new SandboxUnavailableError(`the sandbox host at ${baseUrl} did not answer`, {
          cause: error,
        });
      }
      const parsed = RunCodeResult.safeParse(await response.json().catch(() => null));
      if (!response.ok || !parsed.success)
        throw new SandboxUnavailableError(
          `the sandbox host at ${baseUrl} answered ${response.status} without a result`,
        );
      return parsed.data;
    },
  };
}
