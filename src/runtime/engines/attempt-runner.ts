/** @module Attempt engines' loop: lease held, count an attempt, run it, retry or finish. */
import type { OutcomeHint } from "../../schemas/member-outcome";
import type { AgentTask } from "../../schemas/agent-task";
import type { ChatMessage } from "../../schemas/chat";
import type { TerminationReason } from "../../schemas/termination";
import type { DriveOutcome } from "./driver-deps";
import type { EngineRun, EngineStream } from "./engine-types";
import { type AttemptAgent, runAttempt } from "./run-attempt";

/**
 * Runs `agent` as attempts inside this invocation until one succeeds or `max_attempts` have been
 * started. Each attempt is counted in the session before any user code runs, so an invocation that
 * dies mid-attempt leaves that attempt used: when its lease expires the watchdog re-enqueues the
 * rollout and the next driver starts the attempt after it. A crash retries (AGENT_ERROR when none
 * is left), so does going silent for step_timeout_ms (TIMEOUT when none is left); a contract
 * violation, a limit or the rollout's deadline ends the rollout at once.
 */
export async function runAttempts(
  run: EngineRun,
  task: AgentTask,
  agent: AttemptAgent,
  stream?: EngineStream,
): Promise<DriveOutcome> {
  const { deps, session, lease, resume } = run;
  const config = resume.spec.config;
  let last: { reason: TerminationReason; error: string } | null = null;
  let ranHere = 0;
  for (;;) {
    if (deps.now() >= resume.deadline)
      return finish(run, {
        reason: "TIMEOUT",
        error: `rollout_timeout_ms (${config.rollout_timeout_ms}) exceeded`,
        attempt: ranHere || null,
        outcome: "policy",
      });
    const begun = await session.beginAttempt(lease.lease_id);
    if (!begun.ok) {
      if (begun.reason !== "exhausted")
        return { result: "lost_lease", steps: 0, reason: begun.reason };
      const failure = last ?? {
        reason: "TIMEOUT" as const,
        error: `attempt ${begun.attempts} did not end: the invocation running it stopped and its lease expired`,
      };
      return finish(run, {
        reason: failure.reason,
        error: `${failure.error}; no attempts left (max_attempts ${config.max_attempts})`,
        attempt: begun.attempts,
      });
    }
    const attempt = begun.attempt;
    if (attempt > 1 && ranHere !== attempt - 1) {
      // The previous attempt ran in an invocation that died; say so on the rollout.
      await session.addEvents([
        {
          kind: "exception",
          name: "attempt_abandoned",
          value: {
            attempt: attempt - 1,
            outcome: "abandoned",
            message: "the invocation running it stopped before it ended (lease expired)",
          },
          attributes: { attempt: attempt - 1 },
        },
      ]);
    }
    ranHere = attempt;
    await stream?.({ type: "attempt_started", attempt });
    const outcome = await runAttempt(run, task, agent, attempt);
    await stream?.({
      type: "attempt_ended",
      attempt,
      outcome: outcome.kind,
      error: "error" in outcome ? outcome.error : null,
    });
    switch (outcome.kind) {
      case "succeeded":
        return finish(run, {
          reason: outcome.limit ?? "ENV_DONE",
          reward: outcome.reward,
          attempt,
          messages: outcome.messages,
        });
      case "limit":
        return finish(run, { reason: outcome.reason, error: outcome.error, attempt });
      case "contract":
        return finish(run, { reason: "AGENT_ERROR", error: outcome.error, attempt });
      case "deadline":
        // The attempt ran until the rollout's time was up: the policy's doing (a long generation).
        return finish(run, { reason: "TIMEOUT", error: outcome.error, attempt, outcome: "policy" });
      case "lost_lease":
        return { result: "lost_lease", steps: 0, reason: outcome.error };
      case "crashed":
        last = { reason: "AGENT_ERROR", error: outcome.error };
        break;
      case "unresponsive":
        last = { reason: "TIMEOUT", error: outcome.error };
        break;
    }
  }
}

async function finish(
  run: EngineRun,
  end: {
    reason: TerminationReason;
    reward?: number | null;
    error?: string;
    attempt: number | null;
    messages?: ChatMessage[];
    outcome?: OutcomeHint;
  },
): Promise<DriveOutcome> {
  const ended = await run.session.finish(run.lease.lease_id, {
    termination_reason: end.reason,
    outcome: end.outcome ?? null,
    reward: end.reward ?? null,
    error: end.error ?? null,
    final_attempt: end.attempt,
    ...(end.messages ? { messages: end.messages } : {}),
  });
  if (!ended.ok) return { result: "lost_lease", steps: 0, reason: ended.reason };
  // Ended meanwhile by someone else (a cancel, or the driver of a later attempt): this attempt's outcome does not count.
  if (ended.already) return { result: "lost_lease", steps: 0, reason: "terminal" };
  return {
    result: "finished",
    steps: 0,
    termination_reason: ended.termination_reason ?? end.reason,
    attempts: end.attempt ?? 0,
  };
}
