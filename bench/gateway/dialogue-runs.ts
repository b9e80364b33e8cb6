/**
 * @module Path (c): `dialogue` rollouts driven inside the Worker, their calls timed from the
 * records the Worker writes (the in-process path has no client to hold a stopwatch).
 */
import type { RolloutClient } from "../../scripts/rollout-client";

/** How many rollouts, how long, and how many at once. */
export interface DialoguePlan {
  rollouts: number;
  turns: number;
  maxTokens: number;
  /** Rollouts in flight at once; each runs its steps one after another, so this is also calls in flight. */
  concurrency: number;
  firstTopic: number;
  /** Per rollout, from creation to its end event. */
  timeoutMs: number;
}

/** What a run of rollouts left to read: their ids, the wall time (first create → last end), and failures. */
export interface DialogueRun {
  ids: string[];
  wallMs: number;
  notSucceeded: number;
}

/** The Worker's own timings of every call of the rollouts read. */
export interface DialogueTimings {
  /** `Step.duration_ms`: agent update, policy admission, shaping, the upstream call, capture, release, env step. */
  stepMs: number[];
  /** `Step.started_at` (epoch ms, the Worker's clock). */
  stepStartMs: number[];
  /** `LlmCall.latency_ms`: the upstream call, reply parsing and capture (after admission; the release runs alongside what follows). */
  callMs: number[];
  /** `LlmCall.created_at`: when the timed part of the call began (epoch ms, the Worker's clock). */
  callStartMs: number[];
  completionTokens: number[];
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs the rollouts, `plan.concurrency` at a time, each until its end event. */
export async function runDialogues(
  client: RolloutClient,
  plan: DialoguePlan,
): Promise<DialogueRun> {
  const ids: string[] = [];
  let notSucceeded = 0;
  let next = 0;
  const config = { max_steps: plan.turns, max_tokens_per_call: plan.maxTokens };
  const worker = async () => {
    while (next < plan.rollouts) {
      const topic = plan.firstTopic + next++;
      const rolloutId = crypto.randomUUID();
      ids.push(rolloutId);
      const { end } = await withTimeout(
        client.run({
          agent: "dialogue",
          task: { problem: `Tell me about topic ${topic}.`, extra_args: { turns: plan.turns } },
          config,
          rollout_id: rolloutId,
        }),
        plan.timeoutMs,
        `rollout ${rolloutId}`,
      );
      if (end.status !== "succeeded") notSucceeded++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(plan.concurrency, plan.rollouts) }, worker));
  return { ids, wallMs: performance.now() - start, notSucceeded };
}

/** Reads each rollout's steps and calls (outside the timed window). */
export async function readDialogueTimings(
  client: RolloutClient,
  ids: string[],
): Promise<DialogueTimings> {
  const timings: DialogueTimings = {
    stepMs: [],
    stepStartMs: [],
    callMs: [],
    callStartMs: [],
    completionTokens: [],
  };
  for (const id of ids) {
    const view = await client.get(id);
    for (const step of view.trajectory.steps) {
      timings.stepMs.push(step.duration_ms);
      timings.stepStartMs.push(step.started_at);
    }
    for (const call of view.llm_calls) {
      timings.callMs.push(call.latency_ms);
      timings.callStartMs.push(call.created_at);
      timings.completionTokens.push(call.usage.completion_tokens);
    }
  }
  return timings;
}
