/** Integration: the `llm` resource inside the Worker: in-process gateway calls, streams, raw fetch, weight syncs. */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PolicyState } from "../../../src/runtime/policy/policy-state";
import { llmSaw } from "../../fixtures/authoring-agents";
import {
  api,
  getRollout,
  runRollout,
  startRollout,
  uniqueId,
  waitForEnd,
} from "../../fixtures/rollouts";
import { readPolicyState, restorePolicyState, sleep } from "../fixtures/policy-fixtures";

const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body) });
const run = (via: string, config: Record<string, unknown> = {}) =>
  runRollout({
    agent: "authoring-fn-llm",
    rollout_id: uniqueId(`llm-${via}`),
    task: { problem: "What is 3 + 4?", extra_args: { via } },
    config,
  });

let saved: PolicyState;
beforeAll(async () => void (saved = await readPolicyState()));
afterEach(async () => restorePolicyState(saved));

describe("the llm resource inside the Worker (integration)", () => {
  it("points at the rollout's own gateway under the internal origin, with the rollout's key and the served model", async () => {
    const view = await run("openai");
    const url = `http://edge-rollout.internal/v1/rollouts/${view.rollout_id}/llm/v1`;
    // `endpoint` is Agent-lightning's name for the same URL.
    expect(llmSaw.get(view.rollout_id)).toEqual({
      base_url: url,
      endpoint: url,
      model: "sim-qwen3",
      api_key_prefix: "erk",
    });
    expect(view.llm_calls).toEqual([
      expect.objectContaining({ attempt: 1, backend: "vllm", trainable: true }),
    ]);
  });

  it("records a streamed call, assembled from its chunks, under the attempt", async () => {
    const view = await run("stream");
    expect(view).toMatchObject({ status: "succeeded", reward: 1 });
    expect(view.llm_calls).toHaveLength(1);
    expect(view.llm_calls[0]).toMatchObject({ attempt: 1, request: { stream: true } });
    expect(view.llm_calls[0]!.completion_token_ids.length).toBeGreaterThan(0);
  });

  it("records a call made with the raw llm.fetch (how frameworks taking a custom fetch are bound)", async () => {
    const view = await run("fetch");
    expect(view).toMatchObject({ status: "succeeded" });
    expect(view.llm_calls).toEqual([expect.objectContaining({ attempt: 1, trainable: true })]);
  });

  it("ends the rollout with the limit, not a retry, when the gateway refuses a call for the response budget", async () => {
    const view = await runRollout({
      agent: "authoring-fn-llm",
      rollout_id: uniqueId("llm-limit"),
      task: { problem: "Tell me a long story about the sea.", extra_args: { calls: 3 } },
      config: { max_response_length: 12 },
    });
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "MAX_RESPONSE_LENGTH",
      attempts: 1,
      final_attempt: 1,
    });
    expect(view.llm_calls.length).toBeGreaterThanOrEqual(1);
    expect(
      view.llm_calls.reduce((total, call) => total + call.completion_token_ids.length, 0),
    ).toBeLessThanOrEqual(12);
  });

  it("waits a weight sync out with the idle clock stopped, then calls under the new policy version", async () => {
    expect((await post("/v1/policy/sync/begin", {})).status).toBe(200);
    const rolloutId = await startRollout({
      agent: "authoring-fn-llm",
      rollout_id: uniqueId("llm-sync"),
      task: { problem: "What is 3 + 4?" },
      config: { step_timeout_ms: 500 },
    });
    await sleep(1_500);
    expect(await getRollout(rolloutId)).toMatchObject({ status: "running", llm_calls: [] });
    expect(
      (await post("/v1/policy/sync/end", { policy_version: saved.policy_version + 1 })).status,
    ).toBe(200);
    const view = await waitForEnd(rolloutId);
    expect(view).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(view.llm_calls.map((call) => call.policy_version_start)).toEqual([
      saved.policy_version + 1,
    ]);
  });
});
