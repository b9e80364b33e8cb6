/**
 * @module One arm of `npm run bench:staleness`: a batch in `async/k` submitted with `on_stale`
 * drop or wait, and a simulated trainer that pulls whole groups (inline), checks every trained
 * sample's version lag at the moment it trains it, "trains" for a time proportional to its tokens
 * and then syncs weights without waiting for calls in flight, until the batch is done and the feed holds nothing
 * more of it. The lag is the pull's policy version minus the member's oldest token's version
 * (`policy_version_start`), so queue time counts.
 */
import type { BatchProgress } from "../../src/schemas/batch";
import type { InlineFeedGroup, PullResponse } from "../../src/schemas/feed";
import { fetchAgain } from "../kit/fetch-again";
import { usageBetween, waitIdle } from "../sampling/simulator-usage";

/** What every arm shares, fixed before the run. */
export interface ArmSettings {
  workerUrl: string;
  simulatorUrl: string;
  /** The batch body without `batch_id` and `on_stale`. */
  batch: Record<string, unknown>;
  /** The training mode's k. */
  k: number;
  /** Groups per trainer step. */
  stepGroups: number;
  /** Trainer time per trained token (ms), plus a fixed time per step. */
  trainMsPerToken: number;
  trainMsPerStep: number;
  /** Longest one arm may run. */
  timeoutMs: number;
}

/** What one arm measured. */
export interface ArmResult {
  wallMs: number;
  groupsTrained: number;
  samplesTrained: number;
  tokensTrained: number;
  /** Trained samples whose lag at training time exceeds k (must be 0). */
  beyondBound: number;
  /** Completion tokens the engine generated that were never trained. */
  tokensDiscarded: number;
  syncs: number;
  progress: BatchProgress;
}

async function json<T>(url: string, body?: unknown): Promise<T> {
  const response = await fetchAgain(url, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one arm to its end: the batch done and every group of it trained or dropped. */
export async function runArm(
  settings: ArmSettings,
  batchId: string,
  onStale: "drop" | "wait",
): Promise<ArmResult> {
  const { workerUrl, simulatorUrl, k } = settings;
  const { counters: before } = await waitIdle(simulatorUrl);
  const started = performance.now();
  await json(`${workerUrl}/v1/batches`, {
    ...settings.batch,
    batch_id: batchId,
    on_stale: onStale,
  });
  let version = (await json<{ policy_version: number }>(`${workerUrl}/v1/policy`)).policy_version;
  let staleSeen = 0;
  const result = {
    groupsTrained: 0,
    samplesTrained: 0,
    tokensTrained: 0,
    beyondBound: 0,
    syncs: 0,
  };
  for (;;) {
    if (performance.now() - started > settings.timeoutMs)
      throw new Error(`arm ${onStale} did not finish within ${settings.timeoutMs} ms`);
    const pulled = await json<PullResponse<InlineFeedGroup>>(`${workerUrl}/v1/feed/pull`, {
      max_groups: settings.stepGroups,
      batch_id: batchId,
      inline: true,
      lease_ms: 120_000,
    });
    // Every pull naming the batch lists all its dropped groups; the tracker hears of stale ones after the pull.
    staleSeen = Math.max(
      staleSeen,
      pulled.dropped_groups.filter((group) => group.reason === "stale").length,
    );
    if (pulled.groups.length === 0) {
      const progress = await json<BatchProgress>(`${workerUrl}/v1/batches/${batchId}`);
      // Done, its tracker told of every stale drop, and a pull after it found nothing.
      if (progress.done && progress.refill.stale >= staleSeen) break;
      await sleep(50);
      continue;
    }
    let tokens = 0;
    for (const group of pulled.groups)
      for (const member of group.members) {
        if (pulled.policy_version - member.policy_version_start > k) result.beyondBound += 1;
        result.samplesTrained += 1;
        for (const sample of member.samples)
          tokens += sample.response_mask.reduce<number>((sum, bit) => sum + bit, 0);
      }
    result.groupsTrained += pulled.groups.length;
    result.tokensTrained += tokens;
    await json(`${workerUrl}/v1/feed/ack`, { lease_id: pulled.lease_id });
    await sleep(settings.trainMsPerStep + tokens * settings.trainMsPerToken);
    // Fully asynchronous: the trainer does not wait for calls in flight; they run on under the
    // old weights, and the staleness rule ends those the new version leaves untrainable.
    await json(`${workerUrl}/v1/policy/sync/begin`, { mode: "drain", wait_ms: 0 });
    version += 1;
    await json(`${workerUrl}/v1/policy/sync/end`, { policy_version: version });
    result.syncs += 1;
  }
  const wallMs = performance.now() - started;
  const { counters: after } = await waitIdle(simulatorUrl);
  const generated = usageBetween(before, after).generationTokens;
  return {
    ...result,
    wallMs,
    tokensDiscarded: generated - result.tokensTrained,
    progress: await json<BatchProgress>(`${workerUrl}/v1/batches/${batchId}`),
  };
}
