/**
 * @module Publishing the drain bench's groups through the real sink: external rollouts of a
 * bench agent (this process) that each make one long model call through the rollout's gateway
 * (`ignore_eos` makes the simulator generate exactly `max_tokens`) and finish; each session then
 * publishes its record, ATIF and sample table, and the results consumer feeds and packs the group.
 */
import { MAX_LEASE_MS } from "../../src/schemas/runner-claims";
import { fetchAgain } from "../kit/fetch-again";

/** What to publish. */
export interface DrainPublishShape {
  /** One batch of `groups` rows per id, served together by the same runners. */
  batchIds: string[];
  /** Groups (rows) per batch. */
  groups: number;
  /** Members per group. */
  n: number;
  /** Prompt tokens per sample (approximate: the problem text is sized with the simulator's tokenizer). */
  promptTokens: number;
  responseTokens: number;
  /** Rollouts in flight at once. */
  concurrency: number;
}

/** One POST; a connection the server had already closed is retried on a new one (fetch-again.ts). */
async function post<T>(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const response = await fetchAgain(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok)
    throw new Error(`POST ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** A user message of about `tokens` tokens in the simulator's tokenizer (its chat template adds a few). */
export async function sizedProblem(modelServerUrl: string, tokens: number): Promise<string> {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 97}`).join(" ");
  const count = async (text: string) =>
    (
      await post<{ count: number }>(`${modelServerUrl}/tokenize`, {
        messages: [{ role: "user", content: text }],
        add_generation_prompt: true,
      })
    ).count;
  const base = await count(words(1));
  const per = ((await count(words(101))) - base) / 100;
  return words(Math.max(1, Math.round((tokens - base) / per) + 1));
}

/**
 * Starts one batch of external rollouts (`external:drain`: `groups` rows × `n`) per id and serves
 * them as a runner would: claims rollouts, makes each one's model call through its attempt's
 * gateway and finishes the attempt. Resolves with the wall time it took.
 */
export async function publishDrainGroups(
  workerUrl: string,
  problem: string,
  shape: DrainPublishShape,
): Promise<{ wallMs: number; rollouts: number }> {
  const started = performance.now();
  const rows = Array.from({ length: shape.groups }, (_, i) => ({
    prompt: `${i}: ${problem}`,
    reward_model: { ground_truth: null },
  }));
  for (const batchId of shape.batchIds)
    await post(`${workerUrl}/v1/batches`, {
      batch_id: batchId,
      agent: "external:drain",
      rows,
      n: shape.n,
      max_concurrent: 1000,
    });
  const total = shape.batchIds.length * shape.groups * shape.n;
  let finished = 0;
  const runner = async (w: number): Promise<void> => {
    const runnerId = `drain-runner-${w}`;
    while (finished < total) {
      const { claimed } = await post<{
        claimed: Array<{
          rollout_id: string;
          attempt: number;
          task: { problem: string };
          llm: { base_url: string; api_key: string; model: string };
        }>;
      }>(
        // The longest lease: a runner without heartbeats must not lose a long call's attempt on a loaded machine.
        `${workerUrl}/v1/runners/claim`,
        { runner_id: runnerId, agents: ["drain"], max: 8, lease_ms: MAX_LEASE_MS },
      );
      if (claimed.length === 0) {
        await new Promise((done) => setTimeout(done, 50));
        continue;
      }
      await Promise.all(
        claimed.map(async (rollout) => {
          const request = {
            model: rollout.llm.model,
            messages: [{ role: "user", content: rollout.task.problem }],
            max_tokens: shape.responseTokens,
            ignore_eos: true,
          };
          await post(`${rollout.llm.base_url}/chat/completions`, request, {
            authorization: `Bearer ${rollout.llm.api_key}`,
          });
          await post(
            `${workerUrl}/v1/rollouts/${rollout.rollout_id}/attempts/${rollout.attempt}/finish`,
            { runner_id: runnerId, reward: finished % 2 },
          );
          finished += 1;
        }),
      );
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, Math.round(shape.concurrency / 8)) }, (_, w) => runner(w)),
  );
  return { wallMs: performance.now() - started, rollouts: total };
}

/** Waits until the feed holds `groups` ready groups of the batch (the consumer ingested and packed them). */
export async function untilGroupsReady(
  workerUrl: string,
  batchId: string,
  groups: number,
  timeoutMs = 300_000,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    const stats = (await (
      await fetch(`${workerUrl}/v1/feed/stats?batch_id=${encodeURIComponent(batchId)}`)
    ).json()) as { by_batch: Record<string, { ready_groups: number }> };
    if ((stats.by_batch[batchId]?.ready_groups ?? 0) >= groups) return performance.now() - started;
    if (performance.now() - started > timeoutMs)
      throw new Error(
        `only ${stats.by_batch[batchId]?.ready_groups ?? 0} of ${groups} groups ready after ${timeoutMs / 1000} s`,
      );
    await new Promise((done) => setTimeout(done, 200));
  }
}
