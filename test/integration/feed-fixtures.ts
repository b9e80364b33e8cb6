/**
 * @module The trainer feed in integration tests: finished rollouts made by hand (a valid R2 record
 * and the pointer message the session would send), feed stubs, and moving the policy version.
 */
import { objects, type FeedRpc } from "../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { expect } from "vitest";
import type { FeedStats } from "../../src/schemas/feed";
import { LlmCall } from "../../src/schemas/llm-call";
import { RESULT_MESSAGE_SCHEMA_VERSION, ResultMessage } from "../../src/schemas/result-message";
import { RolloutView } from "../../src/schemas/rollout-api";
import { RolloutConfig } from "../../src/schemas/rollout-config";
import { statusForReason, type TerminationReason } from "../../src/schemas/termination";
import { rolloutAtifKey, rolloutRecordKey } from "../../src/sink/publication/r2-keys";
import {
  ROLLOUT_RECORD_SCHEMA_VERSION,
  RolloutRecord,
} from "../../src/sink/publication/rollout-record";
import { buildTrainingSamples } from "../../src/training/sample-builder";
import { api, uniqueId } from "../fixtures/rollouts";

/** Where a hand-made rollout belongs and how it ended. */
export interface HandResult {
  uid: string;
  sample_index: number;
  group_size: number;
  /** The batch it came from; default none. */
  batch_id?: string;
  training_mode?: string;
  data_manager?: string;
  /** Default ENV_DONE (succeeded); an error reason makes the rollout failed. */
  termination_reason?: TerminationReason;
  reward?: number;
  /** The policy version its one model call ran under. Default 0. */
  policy_version?: number;
  /** Signal fields of the message (outcome, member_attempt, superseded, metric, signal_filter, on_infra_failure). */
  signal?: Partial<
    Pick<
      ResultMessage,
      "outcome" | "member_attempt" | "superseded" | "metric" | "signal_filter" | "on_infra_failure"
    >
  >;
}

/** A feed object of its own (storage is per file, so tests that must not share one use this). */
export function isolatedFeed(label: string): { feed: FeedRpc; name: string } {
  const name = uniqueId(label);
  return { feed: objects(env).feedShard(name), name };
}

/** The default feed, as the Worker's routes and the results consumer reach it. */
export function defaultFeed(): FeedRpc {
  return objects(env).feedShard();
}

/** Runs the feed object's alarm now (returns whether one was set). */
export function runFeedAlarm(name = "default"): Promise<boolean> {
  return runDurableObjectAlarm(env.TRAINER_FEED.get(env.TRAINER_FEED.idFromName(name)));
}

/**
 * Writes an honest RolloutRecord for one finished rollout with one model call to R2 (where the
 * session's publisher puts it) and returns it with the ResultMessage that announces it.
 */
export async function publishHandResult(
  input: HandResult,
): Promise<{ message: ResultMessage; record: RolloutRecord }> {
  const rolloutId = uniqueId(`r-${input.sample_index}`);
  const reason = input.termination_reason ?? "ENV_DONE";
  const status = statusForReason(reason);
  const version = input.policy_version ?? 0;
  const reward = input.reward ?? (status === "succeeded" ? 1 : 0);
  const now = Date.now();
  const completion = [100 + input.sample_index, 101, 102];
  const logprobs = [-0.5, -0.25, -0.125];
  const call = LlmCall.parse({
    call_id: `${rolloutId}/step/0/call/a`,
    rollout_id: rolloutId,
    step_id: `${rolloutId}/step/0`,
    request: { messages: [{ role: "user", content: "What is 2+2?" }] },
    response_message: { role: "assistant", content: "4" },
    prompt_token_ids: [1, 2, 3, 4],
    completion_token_ids: completion,
    logprobs,
    logprobs_mode: "raw_logprobs",
    finish_reason: "stop",
    usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
    backend: "vllm",
    replica: "r0",
    policy_version_start: version,
    policy_version_end: version,
    latency_ms: 3,
    trainable: true,
    created_at: now,
  });
  const view = RolloutView.parse({
    rollout_id: rolloutId,
    agent: "math",
    status,
    termination_reason: reason,
    reward,
    error: status === "failed" ? "boom" : null,
    created_at: now - 10,
    updated_at: now,
    finished_at: now,
    config: RolloutConfig.parse({}),
    usage: { prompt_tokens: 4, completion_tokens: 3, llm_calls: 1 },
    trajectory: {
      task: { problem: "What is 2+2?" },
      steps: [
        {
          step_id: `${rolloutId}/step/0`,
          step_index: 0,
          action: "4",
          observation: "What is 2+2?",
          llm_call_ids: [call.call_id],
          reward,
          done: true,
        },
      ],
      reward,
      trajectory_id: rolloutId,
      termination_reason: reason,
    },
    llm_calls: [call],
    spans: [],
    final_messages: null,
  });
  // The session's own sample builder cuts the samples, as publishRollout does.
  const { samples, drift_splits } = buildTrainingSamples({
    rollout_id: rolloutId,
    status,
    termination_reason: reason,
    reward,
    calls: [call],
    uid: input.uid,
    sample_index: input.sample_index,
    mode: "cumulative",
  });
  const record = RolloutRecord.parse({
    schema_version: ROLLOUT_RECORD_SCHEMA_VERSION,
    rollout: view,
    samples,
    sample_mode: "cumulative",
    drift_splits,
  });
  const key = rolloutRecordKey(rolloutId);
  await env.TRAJECTORIES.put(key, JSON.stringify(record), {
    httpMetadata: { contentType: "application/json" },
  });
  const message = ResultMessage.parse({
    schema_version: RESULT_MESSAGE_SCHEMA_VERSION,
    rollout_id: rolloutId,
    status,
    termination_reason: reason,
    reward,
    uid: input.uid,
    sample_index: input.sample_index,
    group_size: input.group_size,
    batch_id: input.batch_id ?? null,
    training_mode: input.training_mode ?? "verl/hybrid",
    data_manager: input.data_manager ?? "train",
    policy_version_start: version,
    policy_version_end: version,
    key,
    atif_key: rolloutAtifKey(rolloutId),
    samples: samples.length,
    finished_at: now,
    ...input.signal,
  });
  return { message, record };
}

/** Publishes a whole group (`group_size` members, indexes 0..n-1) and returns its messages and records. */
export async function publishGroup(
  size: number,
  options: Omit<HandResult, "uid" | "sample_index" | "group_size"> & { uid?: string } = {},
) {
  const uid = options.uid ?? uniqueId("uid");
  const published = await Promise.all(
    Array.from({ length: size }, (_, i) =>
      publishHandResult({ ...options, uid, sample_index: i, group_size: size }),
    ),
  );
  return {
    uid,
    messages: published.map((p) => p.message),
    records: published.map((p) => p.record),
  };
}

/** Ingests messages one after another into `feed`, asserting the feed accepted each. */
export async function ingestAll(feed: FeedRpc, messages: ResultMessage[]): Promise<void> {
  for (const message of messages) {
    const result = await feed.ingest(message);
    if (!result.ok) throw new Error(`ingest refused: ${JSON.stringify(result)}`);
  }
}

/** POSTs JSON to the Worker. */
export function postJson(path: string, body: unknown): Promise<Response> {
  return api(path, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** `GET /v1/feed/stats`. */
export async function feedStats(): Promise<FeedStats & { policy_version: number }> {
  return (await (await api("/v1/feed/stats")).json()) as FeedStats & { policy_version: number };
}

/** Moves the policy to the next version through the weight-sync routes (begin, then end at once). */
export async function bumpPolicyVersion(): Promise<number> {
  const begun = await postJson("/v1/policy/sync/begin", {});
  const { policy_version } = (await begun.json()) as { policy_version: number };
  const ended = await postJson("/v1/policy/sync/end", { policy_version: policy_version + 1 });
  if (ended.status !== 200)
    throw new Error(`sync/end answered ${ended.status}: ${await ended.text()}`);
  return policy_version + 1;
}

/** Pulls and acks until the default feed has nothing ready, so a test starts from an empty feed. */
export async function drainDefaultFeed(): Promise<void> {
  for (;;) {
    const pulled = (await (await postJson("/v1/feed/pull", { max_groups: 1024 })).json()) as {
      lease_id: string | null;
    };
    if (pulled.lease_id === null) return;
    await postJson("/v1/feed/ack", { lease_id: pulled.lease_id });
  }
}

/** A problem+json answer's fields the feed tests read. */
export interface Problem {
  status: number;
  errors?: Array<{ path: string; message: string }>;
}

/** Asserts `response` is a problem+json answer with `status` and returns its body. */
export async function expectProblem(response: Response, status: number): Promise<Problem> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as Problem;
}
