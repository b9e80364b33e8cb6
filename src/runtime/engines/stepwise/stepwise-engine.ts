/** @module The stepwise engine: a BaseAgent/BaseEnv pair advanced step by step, one commit per step. */
import type { OutcomeHint } from "../../../schemas/member-outcome";
import { describeError, UserCodeError } from "../../../errors";
import type { AgentTask } from "../../../schemas/agent-task";
import type { LlmCall } from "../../../schemas/llm-call";
import { statusForReason, type TerminationReason } from "../../../schemas/termination";
import type { StepwiseAgentDefinition } from "../../../sdk/agent-registry";
import type { DriveOutcome } from "../driver-deps";
import { type Episode, rebuildEpisode } from "./episode";
import { runStep } from "./run-step";
import { StepTimer } from "./step-timer";
import { callEnv } from "./env-lock";
import { callUserCode } from "../user-code";
import { countCall } from "../../session";
import type { AgentEngine, EngineRun, EngineStream } from "../engine-types";

/**
 * Rebuilds the episode from the committed steps, then loops `runStep` → `commitStep` until a
 * termination condition, the time slice (handoff), or a lost lease.
 */
export class StepwiseEngine implements AgentEngine {
  readonly kind = "stepwise";
  readonly #definition: StepwiseAgentDefinition;
  readonly #run: EngineRun;
  /** Committed calls whose release has not been seen yet: their stored end version may need correcting. */
  readonly #unsettled: Array<{ call: LlmCall; released: Promise<number> }> = [];

  constructor(definition: StepwiseAgentDefinition, run: EngineRun) {
    this.#definition = definition;
    this.#run = run;
  }

  async generateTrajectory(_task: AgentTask, stream?: EngineStream): Promise<DriveOutcome> {
    let episode: Episode;
    try {
      // The task is the rollout's (resume.spec.task): the episode is rebuilt from the session.
      episode = await rebuildEpisode(this.#definition, this.#run.resume);
    } catch (error) {
      if (!(error instanceof UserCodeError)) throw error;
      return this.#finish(error.source === "env" ? "ENV_ERROR" : "AGENT_ERROR", error.message);
    }
    try {
      return await this.#stepUntilStopped(episode, stream);
    } finally {
      await this.#settleReleases().catch((error: unknown) =>
        console.error("settling the drive's call releases failed", describeError(error)),
      );
      await callEnv(episode.envClass, "env.close", () => episode.env.close()).catch(
        () => undefined,
      );
    }
  }

  async #stepUntilStopped(episode: Episode, stream?: EngineStream): Promise<DriveOutcome> {
    const { deps, session, lease, resume } = this.#run;
    const { spec } = resume;
    const config = spec.config;
    const sliceEnd = deps.now() + config.slice_ms;
    const firstStep = episode.steps.length;
    for (;;) {
      const stepIndex = episode.steps.length;
      // A driver may die between its last commit and finish: the next one finishes from storage.
      if (episode.pending.done) return this.#finishAfterFinalFeedback("ENV_DONE", episode);
      if (stepIndex >= config.max_steps)
        return this.#finishAfterFinalFeedback("MAX_STEPS", episode);
      const now = deps.now();
      if (now >= resume.deadline)
        return this.#finish(
          "TIMEOUT",
          `rollout_timeout_ms (${config.rollout_timeout_ms}) exceeded`,
          episode,
          { outcome: "policy" },
        );
      // Hand off only after progress, so a tiny slice can never starve a rollout.
      if (now >= sliceEnd && stepIndex > firstStep) {
        await this.#settleReleases();
        const handed = await session.handoff(lease.lease_id);
        return handed.ok
          ? { result: "handed_off", steps: stepIndex }
          : { result: "lost_lease", steps: stepIndex, reason: handed.reason };
      }
      const timer = new StepTimer(config.step_timeout_ms, resume.deadline, deps.now);
      const outcome = await runStep({
        episode,
        spec,
        model: deps.model,
        timer,
        now: deps.now,
        newId: deps.newId,
      });
      if (outcome.kind === "terminate")
        return this.#finish(outcome.reason, outcome.error, episode, outcome);
      // Committed under the version the call was admitted with, without waiting for its release
      // (which rides on the next call's admission): corrected before the drive ends in the rare
      // case a weight sync ended meanwhile (see #settleReleases).
      const committed = await session.commitStep(lease.lease_id, outcome.commit);
      if (!committed.ok) {
        if (committed.reason === "invalid")
          return this.#finish(
            "AGENT_ERROR",
            `step rejected by the session: ${committed.message}`,
            episode,
          );
        return { result: "lost_lease", steps: stepIndex, reason: committed.reason };
      }
      if (!committed.duplicate)
        this.#unsettled.push({ call: outcome.call, released: outcome.released });
      episode.steps.push(outcome.step);
      await stream?.({ type: "step", step: outcome.step });
      episode.pending = {
        observation: outcome.step.next_observation,
        reward: outcome.step.reward,
        done: outcome.step.done,
        info: outcome.step.info,
      };
      episode.counters = countCall(episode.counters, outcome.call);
    }
  }

  /**
   * The agent sees the env's last answer (`updateFromEnv(…, done)`, done true when the env ended the
   * episode) before the rollout ends, as in the seed. A throw there is an agent error.
   */
  async #finishAfterFinalFeedback(
    reason: "ENV_DONE" | "MAX_STEPS",
    episode: Episode,
  ): Promise<DriveOutcome> {
    const { observation, reward, done, info } = episode.pending;
    try {
      await callUserCode("agent", "agent.updateFromEnv", () =>
        episode.agent.updateFromEnv(observation, reward, done, info),
      );
    } catch (error) {
      if (!(error instanceof UserCodeError)) throw error;
      return this.#finish("AGENT_ERROR", error.message, episode);
    }
    return this.#finish(reason, null, episode);
  }

  /** The trajectory reward by the agent's rule; a rule that throws or returns a non-finite number is an agent error. */
  #trajectoryReward(episode: Episode): { reward: number | null; error: string | null } {
    try {
      const reward = this.#definition.computeTrajectoryReward({
        steps: episode.steps,
        task: this.#run.resume.spec.task,
      });
      if (typeof reward !== "number" || !Number.isFinite(reward))
        return {
          reward: null,
          error: `computeTrajectoryReward returned ${String(reward)}, not a finite number`,
        };
      return { reward, error: null };
    } catch (error) {
      return { reward: null, error: `computeTrajectoryReward threw ${describeError(error)}` };
    }
  }

  /**
   * Sends the releases still held back and corrects each committed call whose admission ended
   * under a newer version than it was admitted with (its ttl ran out and a weight sync finished
   * meanwhile). Runs before the rollout is finished or handed off, so its publication and the next
   * driver see the corrected calls; again (finding nothing) when the drive ends any other way.
   */
  async #settleReleases(): Promise<void> {
    await this.#run.deps.model.flushReleases?.();
    for (const { call, released } of this.#unsettled.splice(0)) {
      const versionEnd = await released;
      if (versionEnd !== call.policy_version_end)
        await this.#run.session.amendCallVersion(call.call_id, versionEnd);
    }
  }

  async #finish(
    reason: TerminationReason,
    error: string | null,
    episode?: Episode,
    judged: { outcome?: OutcomeHint; reward?: number } = {},
  ): Promise<DriveOutcome> {
    await this.#settleReleases();
    // A PolicyError's penalty is the reward of an otherwise failed rollout: it is scored.
    let reward: number | null = judged.reward ?? null;
    let finalReason = reason;
    let finalError = error;
    // A failed rollout has no reward (null), whoever ended it; only completed episodes are scored.
    if (episode && statusForReason(reason) === "succeeded") {
      const scored = this.#trajectoryReward(episode);
      reward = scored.reward;
      if (scored.error && finalError === null) {
        finalReason = "AGENT_ERROR";
        finalError = scored.error;
      }
    }
    const ended = await this.#run.session.finish(this.#run.lease.lease_id, {
      termination_reason: finalReason,
      reward,
      error: finalError,
      outcome: finalReason === reason ? (judged.outcome ?? null) : null,
      admissions_released:
        this.#run.deps.model.releasedAll?.(this.#run.resume.spec.rollout_id) ?? false,
    });
    const steps = episode?.steps.length ?? 0;
    if (!ended.ok) return { result: "lost_lease", steps, reason: ended.reason };
    return {
      result: "finished",
      steps,
      termination_reason: ended.termination_reason ?? finalReason,
    };
  }
}
