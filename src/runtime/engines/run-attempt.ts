/** @module One attempt of an attempt agent: its resources, its watchdog, its spans, its outcome. */
import { describeError } from "../../errors";
import type { AgentTask } from "../../schemas/agent-task";
import type { ChatMessage } from "../../schemas/chat";
import type { LlmCall } from "../../schemas/llm-call";
import type { RolloutSpec } from "../../schemas/rollout-api";
import { AgentContractError } from "../../sdk/contract-error";
import { runWithSpanSink } from "../../sdk/emitter-context";
import type { LlmResource, ResourceSpecs } from "../../sdk/resources";
import type { Artifacts, RolloutInfo } from "../../sdk/rollout-info";
import { raceSignal } from "./user-code";
import type { EngineRun } from "./engine-types";
import { artifactStore } from "./artifact-store";
import { AttemptSpans } from "./attempt-spans";
import { AttemptWatchdog } from "./attempt-watchdog";
import { createLlmResource } from "./llm-resource";
import { loadResources } from "./named-resources";

/** Everything one attempt of an attempt agent is given. */
export interface AttemptScope {
  task: AgentTask;
  spec: RolloutSpec;
  llm: LlmResource;
  /** An llm whose calls are recorded as judge calls (`purpose: "judge"`, never trained on): a grader's. Made on first use. */
  judgeLlm(): Promise<LlmResource>;
  rollout: RolloutInfo;
  signal: AbortSignal;
  artifacts: Artifacts;
  heartbeat: () => void;
  /** Declared resources by key. */
  resources: Record<string, unknown>;
  /** The attempt's spans (the sink emitters write to). */
  spans: AttemptSpans;
  /** The calls this attempt has made so far, as the session recorded them. */
  calls(): Promise<LlmCall[]>;
}

/** An attempt that ended by itself: the reward, and the final conversation if the agent gave one. */
export interface AttemptSuccess {
  reward: number | null;
  messages?: ChatMessage[];
}

/** One agent kind, as the attempt runner sees it: the resources it declares and how to run its code once. */
export interface AttemptAgent {
  resources: ResourceSpecs;
  run(scope: AttemptScope): Promise<AttemptSuccess>;
}

type LimitReason = "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH";

/** How an attempt ended. `crashed` and `unresponsive` may be retried; the others end the rollout or the drive. */
export type AttemptOutcome =
  | {
      kind: "succeeded";
      reward: number | null;
      messages: ChatMessage[] | undefined;
      limit: LimitReason | null;
    }
  | { kind: "crashed" | "unresponsive" | "contract" | "deadline" | "lost_lease"; error: string }
  | { kind: "limit"; reason: LimitReason; error: string };

/** Lease renewals during an attempt: well inside the lease's TTL (step_timeout_ms + 15 s), at most every 10 s. */
function renewEveryMs(stepTimeoutMs: number): number {
  return Math.max(100, Math.min(10_000, Math.floor(stepTimeoutMs / 2)));
}

/**
 * Runs attempt `attempt` of `agent`: builds the llm resource, loads declared resources (recording
 * their versions), runs the agent's code with the attempt's span sink installed, and classifies how
 * it ended. The code races the watchdog's signal, so code that ignores the signal cannot hold the
 * driver; it may keep running in the background, but its spans and model calls no longer count.
 */
export async function runAttempt(
  run: EngineRun,
  task: AgentTask,
  agent: AttemptAgent,
  attempt: number,
): Promise<AttemptOutcome> {
  const { deps, session, lease, resume } = run;
  const { spec } = resume;
  const config = spec.config;
  const watchdog = new AttemptWatchdog({
    idleMs: config.step_timeout_ms,
    deadline: resume.deadline,
    now: deps.now,
    renewEveryMs: renewEveryMs(config.step_timeout_ms),
    renewLease: async () => (await session.renewLease(lease.lease_id)).ok,
  });
  const touch = () => watchdog.touch();
  const spans = new AttemptSpans(session, attempt, touch);
  const signal = watchdog.signal;
  const hit: { limit: { reason: LimitReason; message: string } | null } = { limit: null };
  try {
    const work = (async () => {
      const hooks = {
        attempt,
        signal,
        touch,
        pause: (waiting: boolean) => watchdog.pause(waiting),
        onLimit: (reason: LimitReason, message: string) => void (hit.limit ??= { reason, message }),
      };
      const [llm, loaded] = await Promise.all([
        createLlmResource(deps.inWorker.gateway, spec, hooks),
        loadResources(deps.inWorker.resources, agent.resources, spec.rollout_id),
      ]);
      if (Object.keys(loaded.versions).length > 0)
        spans.append({
          kind: "annotation",
          name: "resources",
          value: loaded.versions,
          attributes: { resource_names: loaded.names },
        });
      const rollout: RolloutInfo = {
        rollout_id: spec.rollout_id,
        mode: config.mode,
        attempt: {
          attempt_id: `${spec.rollout_id}/attempt/${attempt}`,
          sequence_id: attempt,
          max_attempts: config.max_attempts,
        },
        config,
        signal,
        resource_versions: loaded.versions,
      };
      let judge: Promise<LlmResource> | undefined;
      const scope: AttemptScope = {
        task,
        spec,
        llm,
        judgeLlm: () =>
          (judge ??= createLlmResource(deps.inWorker.gateway, spec, hooks, {
            purpose: "judge",
            model: llm.model,
          })),
        rollout,
        signal,
        artifacts: artifactStore(deps.inWorker.artifacts, spec.rollout_id, touch),
        heartbeat: () => spans.heartbeat(),
        resources: loaded.values,
        spans,
        calls: () => session.attemptCalls(attempt),
      };
      return runWithSpanSink(spans, () => agent.run(scope));
    })();
    const success = await raceSignal(work, signal);
    return {
      kind: "succeeded",
      reward: success.reward,
      messages: success.messages,
      limit: hit.limit?.reason ?? null,
    };
  } catch (error) {
    const outcome = classify(error, watchdog, hit.limit, attempt);
    spans.append({
      kind: "exception",
      name: `attempt_${outcome.kind}`,
      value: { attempt, outcome: outcome.kind, message: outcome.error },
    });
    return outcome;
  } finally {
    watchdog.dispose();
    spans.close();
    await spans.flush();
  }
}

function classify(
  error: unknown,
  watchdog: AttemptWatchdog,
  limit: { reason: LimitReason; message: string } | null,
  attempt: number,
): Exclude<AttemptOutcome, { kind: "succeeded" }> {
  const aborted = watchdog.aborted;
  if (aborted)
    return { kind: aborted.kind, error: `attempt ${attempt} was given up: ${aborted.message}` };
  // A call the gateway refused for a limit ends the rollout with that limit, however the agent reacted.
  if (limit) return { kind: "limit", reason: limit.reason, error: limit.message };
  if (error instanceof AgentContractError) return { kind: "contract", error: error.message };
  return { kind: "crashed", error: `attempt ${attempt} threw ${describeError(error)}` };
}
