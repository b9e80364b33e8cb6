/** Unit: deciding a fork (planFork), what it copies (selectPrefix, rebasePrefix) and the samples of a child (mask, tree fields). */
import { describe, expect, it } from "vitest";
import { LlmCall } from "../../../../../src/schemas/llm-call";
import { RolloutSpec } from "../../../../../src/schemas/rollout-api";
import { Span } from "../../../../../src/schemas/span";
import { Step, stepIdFor } from "../../../../../src/schemas/step";
import { ForkRolloutRequest } from "../../../../../src/schemas/rollout-tree";
import { planFork } from "../../../../../src/runtime/session/fork/fork-plan";
import {
  rebasePrefix,
  selectPrefix,
  withStepIndex,
} from "../../../../../src/runtime/session/fork/fork-prefix";
import type { ForkSourceResult } from "../../../../../src/runtime/session/fork/session-fork";
import type { AgentDefinition } from "../../../../../src/sdk/agent-registry";
import { buildTrainingSamples } from "../../../../../src/training/sample-builder";

const PARENT = "p-1";
const stepwise = { kind: "stepwise", engine: "stepwise" } as unknown as AgentDefinition;

function spec(overrides: Partial<RolloutSpec> = {}): RolloutSpec {
  return RolloutSpec.parse({
    rollout_id: PARENT,
    agent: "a",
    task: { problem: "p" },
    config: { max_steps: 4, seed: 7 },
    created_at: 1,
    ...overrides,
  });
}

function source(
  overrides: Partial<Extract<ForkSourceResult, { ok: true }>> = {},
): Extract<ForkSourceResult, { ok: true }> {
  return {
    ok: true,
    spec: spec(),
    status: "succeeded",
    step_count: 3,
    last_step_done: false,
    prefix: null,
    ...overrides,
  };
}

/** Call i of a growing conversation: its prompt is everything before plus one new token. */
function call(i: number, rolloutId = PARENT): LlmCall {
  const prompt = Array.from({ length: 2 + 3 * i }, (_, t) => t);
  return LlmCall.parse({
    call_id: `${stepIdFor(rolloutId, i)}/call/u${i}`,
    rollout_id: rolloutId,
    step_id: stepIdFor(rolloutId, i),
    request: { messages: [{ role: "user", content: `m${i}` }] },
    response_message: { role: "assistant", content: `r${i}` },
    prompt_token_ids: prompt,
    completion_token_ids: [prompt.length, prompt.length + 1],
    logprobs: [-0.5 - i, -0.25],
    logprobs_mode: "processed_logprobs",
    finish_reason: "stop",
    usage: { prompt_tokens: prompt.length, completion_tokens: 2, total_tokens: prompt.length + 2 },
    backend: "vllm",
    replica: "r0",
    latency_ms: 1,
    trainable: true,
    created_at: 1,
  });
}

function step(i: number): Step {
  return Step.parse({
    step_id: stepIdFor(PARENT, i),
    step_index: i,
    action: `a${i}`,
    observation: `o${i}`,
    llm_call_ids: [call(i).call_id],
  });
}

function plan(
  body: Record<string, unknown>,
  from = source(),
  definition: AgentDefinition | undefined = stepwise,
) {
  const parsed = ForkRolloutRequest.parse(body);
  return planFork({
    source: from,
    definition,
    body: parsed,
    childIds: parsed.rollout_ids ?? Array.from({ length: parsed.n }, (_, i) => `c-${i}`),
    now: 5,
  });
}

describe("planFork", () => {
  it("makes n children with the parent's agent and task, their place in the tree and a seed each", () => {
    const result = plan({ at_step: 2, n: 2 });
    expect(result.ok).toBe(true);
    const children = result.ok ? result.children : [];
    expect(children.map((child) => child.tree)).toEqual(
      [0, 1].map((i) => ({
        root: PARENT,
        parent: PARENT,
        branch_step: 2,
        path: [PARENT, `c-${i}`],
        branch_index: i,
        train_shared_prefix: false,
      })),
    );
    expect(
      children.every(
        (child) => child.agent === "a" && child.task.problem === "p" && child.group === null,
      ),
    ).toBe(true);
    expect(new Set(children.map((child) => child.config.seed)).size).toBe(2);
  });

  it("extends the path of a parent that is itself a fork, and puts siblings of a grouped parent in one new group", () => {
    const parent = spec({
      tree: {
        root: "r",
        parent: "r",
        branch_step: 1,
        path: ["r", PARENT],
        branch_index: 0,
        train_shared_prefix: false,
      },
      group: {
        uid: "g",
        sample_index: 3,
        group_size: 8,
        batch_id: "b",
        training_mode: "verl/hybrid",
        data_manager: "train",
        attempt: 1,
        max_member_retries: 2,
        signal_filter: null,
        on_infra_failure: "withhold",
      },
    });
    const result = plan({ at_step: 2, n: 2 }, source({ spec: parent }));
    const children = result.ok ? result.children : [];
    expect(children[1]!.tree).toMatchObject({
      root: "r",
      parent: PARENT,
      path: ["r", PARENT, "c-1"],
    });
    expect(children.map((child) => child.group)).toEqual(
      [0, 1].map((i) =>
        expect.objectContaining({
          uid: "fork:c-0",
          sample_index: i,
          group_size: 2,
          batch_id: null,
          data_manager: "train",
          attempt: 0,
        }),
      ),
    );
  });

  it.each([
    [
      "a step a running parent has not committed",
      { at_step: 4 },
      source({ status: "running" }),
      409,
      "at_step",
    ],
    ["a step past a finished parent's steps", { at_step: 4 }, source(), 422, "at_step"],
    [
      "the step after an episode that ended",
      { at_step: 3 },
      source({ last_step_done: true }),
      422,
      "at_step",
    ],
    [
      "a step at the merged max_steps",
      { at_step: 3, config: { max_steps: 3 } },
      source(),
      422,
      "at_step",
    ],
    [
      "an invalid config field",
      { at_step: 1, config: { temperature: 9 } },
      source(),
      422,
      "config.temperature",
    ],
    [
      "the parent's own id as a child's",
      { at_step: 1, rollout_ids: [PARENT] },
      source(),
      409,
      "rollout_ids.0",
    ],
    [
      "an external parent",
      { at_step: 0 },
      source({ spec: spec({ kind: "external", agent: "external" }) }),
      422,
      "rollout_id",
    ],
  ])("refuses %s", (_case, body, from, status, path) => {
    const result = plan(body, from);
    expect(result).toMatchObject({
      ok: false,
      status,
      problems: [expect.objectContaining({ path })],
    });
  });

  it("refuses attempt-style agents, naming their kind", () => {
    const result = plan({ at_step: 0 }, source(), {
      kind: "function",
    } as unknown as AgentDefinition);
    expect(result.ok ? "" : result.problems[0]!.message).toContain("function agent");
  });
});

describe("ForkRolloutRequest", () => {
  it.each([
    [{ at_step: 0, n: 0 }, "n"],
    [{ at_step: 0, n: 65 }, "n"],
    [{ at_step: 0, n: 2, rollout_ids: ["x"] }, "rollout_ids"],
    [{ at_step: 0, n: 2, rollout_ids: ["x", "x"] }, "rollout_ids.1"],
    [{ n: 1 }, "at_step"],
  ])("refuses %j naming %s", (body, path) => {
    const parsed = ForkRolloutRequest.safeParse(body);
    expect(
      parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join(".")),
    ).toContain(path);
  });
});

describe("selectPrefix and rebasePrefix", () => {
  const spans = [0, 1, 2].map((i) =>
    Span.parse({
      sequence_id: i + 1,
      kind: "reward",
      name: "r",
      value: i,
      attributes: withStepIndex({ kind: "reward", attributes: {} }, i).attributes,
      start_time: null,
      end_time: null,
      created_at: 1,
    }),
  );
  const prefix = selectPrefix(PARENT, 2, {
    steps: [0, 1, 2].map((i) => ({ step: step(i), envSnapshot: { turn: i + 1 } })),
    calls: [0, 1, 2].map((i) => call(i)),
    spans,
  });

  it("takes the steps, calls and spans before the branch step only, each call stored against the one before it", () => {
    expect(prefix.steps.map(({ step: s }) => s.step_index)).toEqual([0, 1]);
    expect(prefix.calls.map((c) => c.call_id)).toEqual([call(0).call_id, call(1).call_id]);
    // Call 1's prompt repeats call 0's prompt + completion (4 ids): only the one new id travels.
    expect(prefix.calls[1]).toMatchObject({
      prompt_token_ids: [4],
      stored_prefix: { of: call(0).call_id, prompt_tokens: 4 },
    });
    expect(prefix.spans.map((span) => span.value)).toEqual([0, 1]);
  });

  it("gives the child its own step and call ids and keeps the parent's tokens, logprobs, messages and snapshots", () => {
    const rebased = rebasePrefix(prefix, "c-0");
    expect(
      rebased.steps.map(({ step: s, envSnapshot }) => [s.step_id, s.llm_call_ids, envSnapshot]),
    ).toEqual(
      [0, 1].map((i) => [
        stepIdFor("c-0", i),
        [`${stepIdFor("c-0", i)}/call/u${i}`],
        { turn: i + 1 },
      ]),
    );
    expect(rebased.calls.map((c) => [c.rollout_id, c.step_id, c.forked_from])).toEqual(
      [0, 1].map((i) => ["c-0", stepIdFor("c-0", i), call(i).call_id]),
    );
    expect(
      rebased.calls.map((c) => [
        c.prompt_token_ids,
        c.completion_token_ids,
        c.logprobs,
        c.request,
        c.response_message,
      ]),
    ).toEqual(
      [0, 1].map((i) => [
        call(i).prompt_token_ids,
        call(i).completion_token_ids,
        call(i).logprobs,
        call(i).request,
        call(i).response_message,
      ]),
    );
  });
});

describe("a child's samples", () => {
  const tree = {
    root: PARENT,
    parent: PARENT,
    branch_step: 1,
    path: [PARENT, "c-0"],
    branch_index: 0,
    train_shared_prefix: false,
  };
  const childCalls = () => [{ ...call(0, "c-0"), forked_from: call(0).call_id }, call(1, "c-0")];

  it("are the parent's tokens with the shared completions as context (mask 0, logprobs kept) and carry the tree", () => {
    const input = {
      rollout_id: "c-0",
      status: "succeeded" as const,
      termination_reason: "ENV_DONE" as const,
      reward: 1,
      uid: "c-0",
      sample_index: 0,
      mode: "cumulative" as const,
    };
    const [child] = buildTrainingSamples({ ...input, calls: childCalls(), tree }).samples;
    const [parent] = buildTrainingSamples({ ...input, calls: [call(0), call(1)] }).samples;
    expect([child!.prompt_ids, child!.response_ids, child!.response_logprobs]).toEqual([
      parent!.prompt_ids,
      parent!.response_ids,
      parent!.response_logprobs,
    ]);
    expect(parent!.response_mask).toEqual([1, 1, 0, 1, 1]);
    expect(child!.response_mask).toEqual([0, 0, 0, 1, 1]);
    expect(child!.extra_fields.tree).toEqual(tree);
    const trained = buildTrainingSamples({
      ...input,
      calls: childCalls(),
      tree: { ...tree, train_shared_prefix: true },
    }).samples[0]!;
    expect(trained.response_mask).toEqual(parent!.response_mask);
    expect(
      buildTrainingSamples({ ...input, mode: "per_call", calls: childCalls(), tree }).samples.map(
        (s) => s.extra_fields.calls,
      ),
    ).toEqual([[call(1, "c-0").call_id]]);
  });
});
