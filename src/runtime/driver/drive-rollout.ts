/** @module The stateless driver: lease a rollout, advance it step by step, commit, finish or hand off. */
import { describeError, UserCodeError } from "../../errors";
import type { ModelClient } from "../../gateway/model-client";
import type { Clock } from "../../ports";
import { statusForReason, type TerminationReason } from "../../schemas/termination";
import type { AgentDefinition } from "../../sdk/agent-registry";
import type { SessionHandle, SessionLocator } from "../session/session-handle";
import type { Lease } from "../session/session-state";
import type { ResumeState } from "../session/session-results";
import { type Episode, rebuildEpisode } from "./episode";
import { runStep } from "./run-step";
import { StepTimer } from "./step-timer";

/** What the driver needs; all of it is injected so the loop runs the same in tests and in Workers. */
export interface DriverDeps {
  sessions: SessionLocator;
  resolveAgent: (name: string) => AgentDefinition | undefined;
  model: ModelClient;
  now: Clock;
  /** Identifies this invocation in leases. */
  driverId: string;
  newId: () => string;
}

/** How one `driveRollout` call ended. */
export type DriveOutcome =
  | { result: "finished"; steps: number; termination_reason: TerminationReason }
  | { result: "handed_off"; steps: number }
  | { result: "skipped"; reason: string }
  | { result: "lost_lease"; steps: number; reason: string };

/**
 * Advances one rollout as far as this invocation may: until it ends, its time slice runs out
 * (then it is handed off through the queue), or its lease is taken away (cancel, or a watchdog
 * that gave the work to another driver). Every step is committed before the next begins.
 */
export async function driveRollout(deps: DriverDeps, rolloutId: string): Promise<DriveOutcome> {
  const session = deps.sessions.get(rolloutId);
  const leased = await session.lease(deps.driverId);
  if (!leased.ok) return { result: "skipped", reason: leased.reason };
  const { lease, resume } = leased;
  const definition = deps.resolveAgent(resume.spec.agent);
  if (!definition) return finish(session, lease, null, resume, "AGENT_ERROR", `agent "${resume.spec.agent}" is not registered in this deployment`);

  let episode: Episode;
  try {
    episode = await rebuildEpisode(definition, resume);
  } catch (error) {
    if (!(error instanceof UserCodeError)) throw error;
    return finish(session, lease, null, resume, error.source === "env" ? "ENV_ERROR" : "AGENT_ERROR", error.message);
  }
  try {
    return await stepUntilStopped(deps, session, lease, resume, definition, episode);
  } finally {
    await Promise.resolve(episode.env.close()).catch(() => undefined);
  }
}

async function stepUntilStopped(deps: DriverDeps, session: SessionHandle, lease: Lease, resume: ResumeState, definition: AgentDefinition, episode: Episode): Promise<DriveOutcome> {
  const { spec } = resume;
  const config = spec.config;
  const sliceEnd = deps.now() + config.slice_ms;
  const firstStep = episode.steps.length;
  for (;;) {
    const stepIndex = episode.steps.length;
    // A driver may die between its last commit and finish: the next one finishes from storage.
    if (episode.pending.done) return finish(session, lease, definition, resume, "ENV_DONE", null, episode);
    if (stepIndex >= config.max_steps) return finish(session, lease, definition, resume, "MAX_STEPS", null, episode);
    const now = deps.now();
    if (now >= resume.deadline) return finish(session, lease, definition, resume, "TIMEOUT", `rollout_timeout_ms (${config.rollout_timeout_ms}) exceeded`, episode);
    // Hand off only after progress, so a tiny slice can never starve a rollout.
    if (now >= sliceEnd && stepIndex > firstStep) {
      const handed = await session.handoff(lease.lease_id);
      return handed.ok ? { result: "handed_off", steps: stepIndex } : { result: "lost_lease", steps: stepIndex, reason: handed.reason };
    }
    const timer = new StepTimer(config.step_timeout_ms, resume.deadline, deps.now);
    const outcome = await runStep({ episode, spec, model: deps.model, timer, now: deps.now, newId: deps.newId });
    if (outcome.kind === "terminate") return finish(session, lease, definition, resume, outcome.reason, outcome.error, episode);
    const committed = await session.commitStep(lease.lease_id, outcome.commit);
    if (!committed.ok) {
      if (committed.reason === "invalid") return finish(session, lease, definition, resume, "AGENT_ERROR", `step rejected by the session: ${committed.message}`, episode);
      return { result: "lost_lease", steps: stepIndex, reason: committed.reason };
    }
    episode.steps.push(outcome.step);
    episode.pending = { observation: outcome.step.next_observation, reward: outcome.step.reward, done: outcome.step.done, info: outcome.step.info };
    episode.completionTokens += outcome.completionTokens;
    const call = outcome.commit.llm_calls[0];
    if (call) {
      episode.lastContextTokens = (call.prompt_token_ids?.length ?? 0) + (call.completion_token_ids?.length ?? 0) || (call.usage?.total_tokens ?? 0);
      episode.lastContextMessages = (Array.isArray(call.request.messages) ? call.request.messages.length : 0) + 1;
      episode.lastReplica = call.replica ?? null;
    }
  }
}

/** The trajectory reward by the agent's rule; a rule that throws or returns a non-finite number is an agent error. */
function trajectoryReward(definition: AgentDefinition, resume: ResumeState, episode: Episode): { reward: number | null; error: string | null } {
  try {
    const reward = definition.computeTrajectoryReward({ steps: episode.steps, task: resume.spec.task });
    if (typeof reward !== "number" || !Number.isFinite(reward)) return { reward: null, error: `computeTrajectoryReward returned ${String(reward)}, not a finite number` };
    return { reward, error: null };
  } catch (error) {
    return { reward: null, error: `computeTrajectoryReward threw ${describeError(error)}` };
  }
}

async function finish(session: SessionHandle, lease: Lease, definition: AgentDefinition | null, resume: ResumeState, reason: TerminationReason, error: string | null, episode?: Episode): Promise<DriveOutcome> {
  let reward: number | null = null;
  let finalReason = reason;
  let finalError = error;
  // A failed rollout has no reward (null), whoever ended it; only completed episodes are scored.
  if (definition && episode && statusForReason(reason) === "succeeded") {
    const scored = trajectoryReward(definition, resume, episode);
    reward = scored.reward;
    if (scored.error && finalError === null) {
      finalReason = "AGENT_ERROR";
      finalError = scored.error;
    }
  }
  const ended = await session.finish(lease.lease_id, { termination_reason: finalReason, reward, error: finalError });
  const steps = episode?.steps.length ?? 0;
  if (!ended.ok) return { result: "lost_lease", steps, reason: ended.reason };
  return { result: "finished", steps, termination_reason: ended.termination_reason ?? finalReason };
}
