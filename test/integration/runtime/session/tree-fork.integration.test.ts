/**
 * Integration: tree rollouts (`POST /v1/rollouts/:id/fork`, issue 32). Children hold the parent's
 * first k steps and calls exactly (token ids, logprobs, messages), their environment continues
 * from the parent's state at step k (restored from its snapshot, or its actions replayed), their
 * samples carry `extra_fields.tree` with the shared prefix as context, and the parent is unchanged.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import "../../../fixtures/test-agents";
import "../../../fixtures/authoring-agents";
import type { RolloutView } from "../../../../src/schemas/rollout-api";
import type { TrainingSample } from "../../../../src/schemas/training-sample";
import { RolloutRecord } from "../../../../src/sink/publication/rollout-record";
import { rolloutRecordKey, rolloutSamplesKey } from "../../../../src/sink/publication/r2-keys";
import { columnsToSamples, readSampleTable } from "../../../../src/sink/formats/sample-columns";
import { createByHand } from "../../../fixtures/hand-session";
import {
  api,
  getRollout,
  postRollout,
  runRollout,
  uniqueId,
  waitFor,
  waitForEnd,
} from "../../../fixtures/rollouts";
import { envCalls } from "../../../fixtures/test-agents";

interface ForkAnswer {
  parent: string;
  at_step: number;
  children: Array<{ rollout_id: string; created: boolean; tree: RolloutView["tree"] }>;
}

interface Problem {
  status: number;
  errors?: Array<{ path: string; message: string }>;
}

function fork(parentId: string, body: unknown): Promise<Response> {
  return api(`/v1/rollouts/${parentId}/fork`, { method: "POST", body: JSON.stringify(body) });
}

/** Asserts a problem+json answer with `status` naming `path`, and returns its messages. */
async function expectProblem(response: Response, status: number, path: string): Promise<string> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const problem = (await response.json()) as Problem;
  expect(problem.errors?.map((error) => error.path)).toContain(path);
  return problem.errors!.map((error) => error.message).join("; ");
}

/** A finished 3-step parent of `agent` (LoopEnv: never done, so it ends MAX_STEPS). */
function runParent(
  agent: string,
  label: string,
  group?: { uid: string; sample_index: number; group_size: number; data_manager: string },
): Promise<RolloutView> {
  return runRollout({
    agent,
    rollout_id: uniqueId(label),
    task: { problem: "Count the turns.", extra_args: {} },
    config: { max_steps: 3 },
    ...(group ? { group } : {}),
  });
}

/** Forks `parent` at `atStep` into `n` children with one more step allowed than the parent had, and waits for them to end. */
async function forkAndRun(parent: RolloutView, atStep: number, n: number): Promise<RolloutView[]> {
  const response = await fork(parent.rollout_id, { at_step: atStep, n, config: { max_steps: 4 } });
  expect(response.status).toBe(202);
  const answer = (await response.json()) as ForkAnswer;
  expect(answer.children).toHaveLength(n);
  return Promise.all(answer.children.map((child) => waitForEnd(child.rollout_id)));
}

/** What a call is as the engine produced it, ids aside. */
function tokensOf(call: RolloutView["llm_calls"][number]) {
  return {
    prompt: call.prompt_token_ids,
    completion: call.completion_token_ids,
    logprobs: call.logprobs,
    messages: call.request.messages,
    reply: call.response_message,
  };
}

describe.each([
  ["test-snapshot", "restored from its snapshot"],
  ["test-loop", "replayed from the parent's actions"],
])("forking a finished %s rollout at step 2", (agent, how) => {
  it(`gives each child the parent's first 2 steps and calls exactly, and an env ${how}`, async () => {
    const parent = await runParent(agent, `tree-${agent}`);
    expect(parent).toMatchObject({ status: "succeeded", termination_reason: "MAX_STEPS" });
    const envBefore = { ...envCalls(parent.trajectory.task.task_id) };
    const children = await forkAndRun(parent, 2, 2);
    for (const [i, child] of children.entries()) {
      expect(child).toMatchObject({
        status: "succeeded",
        termination_reason: "MAX_STEPS",
        tree: {
          root: parent.rollout_id,
          parent: parent.rollout_id,
          branch_step: 2,
          path: [parent.rollout_id, child.rollout_id],
          branch_index: i,
        },
      });
      expect(child.llm_calls).toHaveLength(4);
      expect(child.llm_calls.slice(0, 2).map(tokensOf)).toEqual(
        parent.llm_calls.slice(0, 2).map(tokensOf),
      );
      expect(child.llm_calls.slice(0, 2).map((call) => call.forked_from)).toEqual(
        parent.llm_calls.slice(0, 2).map((call) => call.call_id),
      );
      expect(child.llm_calls[2]!.forked_from).toBeUndefined();
      expect(new Set(child.llm_calls.map((call) => call.call_id)).size).toBe(4);
      const [shared, own] = [child.trajectory.steps.slice(0, 2), child.trajectory.steps[2]!];
      expect(shared.map((step) => [step.action, step.observation, step.next_observation])).toEqual(
        parent.trajectory.steps
          .slice(0, 2)
          .map((step) => [step.action, step.observation, step.next_observation]),
      );
      // The env's turn counter continues: a fresh reset would have answered turn 1 here.
      expect(own.observation).toBe(parent.trajectory.steps[1]!.next_observation);
      expect(own.info).toMatchObject({ turn: 3 });
      // The child's own call continues the shared conversation append-only (the agent was replayed).
      const previous = [
        ...child.llm_calls[1]!.prompt_token_ids,
        ...child.llm_calls[1]!.completion_token_ids,
      ];
      expect(child.llm_calls[2]!.prompt_token_ids.slice(0, previous.length)).toEqual(previous);
    }
    const envAfter = envCalls(parent.trajectory.task.task_id);
    // Each child ran its own 2 steps; a replaying env also re-ran the 2 shared ones.
    if (agent === "test-snapshot")
      expect({
        restore: envAfter.restore - envBefore.restore,
        step: envAfter.step - envBefore.step,
      }).toEqual({ restore: 2, step: 4 });
    else
      expect({
        restore: envAfter.restore - envBefore.restore,
        step: envAfter.step - envBefore.step,
      }).toEqual({ restore: 0, step: 8 });
    const again = await getRollout(parent.rollout_id);
    // (Its updated_at may move: publication runs on after the end and is recorded in its state.)
    expect({
      steps: again.trajectory.steps,
      calls: again.llm_calls,
      status: again.status,
      usage: again.usage,
      spans: again.spans,
    }).toEqual({
      steps: parent.trajectory.steps,
      calls: parent.llm_calls,
      status: parent.status,
      usage: parent.usage,
      spans: parent.spans,
    });
    // What does change: the parent lists its forks.
    expect(again.forks).toEqual([
      expect.objectContaining({
        at_step: 2,
        children: children.map((child) => child.rollout_id),
        unlisted: 0,
      }),
    ]);
  });
});

describe("a child's published samples", () => {
  it("share the parent's prefix tokens as context (mask 0) and carry extra_fields.tree, in JSON and Arrow", async () => {
    // In a group a trainer pulls: only such rollouts get a sample table (Arrow) besides the record.
    const group = {
      uid: uniqueId("tree-group"),
      sample_index: 0,
      group_size: 1,
      data_manager: "train",
    };
    const parent = await runParent("test-snapshot", "tree-samples", group);
    const [child] = await forkAndRun(parent, 2, 1);
    const published = async (rolloutId: string) =>
      waitFor(`${rolloutId}'s record`, async () => {
        const object = await env.TRAJECTORIES.get(rolloutRecordKey(rolloutId));
        return object ? RolloutRecord.parse(await object.json()) : undefined;
      });
    const [parentSample, childSample] = [
      (await published(parent.rollout_id)).samples[0]!,
      (await published(child!.rollout_id)).samples[0]!,
    ];
    const tree = {
      root: parent.rollout_id,
      parent: parent.rollout_id,
      branch_step: 2,
      path: [parent.rollout_id, child!.rollout_id],
      branch_index: 0,
      train_shared_prefix: false,
    };
    expect(childSample.extra_fields.tree).toEqual(tree);
    expect(parentSample.extra_fields.tree).toBeUndefined();
    // The shared part: everything up to the end of the second call's completion.
    const call1 = parent.llm_calls[1]!;
    const sharedLength =
      call1.prompt_token_ids.length +
      call1.completion_token_ids.length -
      parentSample.prompt_ids.length;
    expect(childSample.prompt_ids).toEqual(parentSample.prompt_ids);
    expect(childSample.response_ids.slice(0, sharedLength)).toEqual(
      parentSample.response_ids.slice(0, sharedLength),
    );
    expect(childSample.response_logprobs.slice(0, sharedLength)).toEqual(
      parentSample.response_logprobs.slice(0, sharedLength),
    );
    expect(childSample.response_mask.slice(0, sharedLength).every((bit) => bit === 0)).toBe(true);
    expect(parentSample.response_mask.slice(0, sharedLength)).toContain(1);
    const ownCompletion = child!.llm_calls[2]!.completion_token_ids.length;
    expect(childSample.response_mask.filter((bit) => bit === 1)).toHaveLength(
      ownCompletion + child!.llm_calls[3]!.completion_token_ids.length,
    );
    // The sample table is written after the JSON record (publish-rollout.ts), so wait for it too.
    const arrow = await waitFor(
      "the child's sample table",
      async () => (await env.TRAJECTORIES.get(rolloutSamplesKey(child!.rollout_id))) ?? undefined,
    );
    const fromArrow: TrainingSample[] = columnsToSamples(
      readSampleTable(new Uint8Array(await arrow.arrayBuffer())),
    );
    expect(fromArrow[0]!.extra_fields.tree).toEqual(tree);
    expect(fromArrow[0]!.response_mask).toEqual(childSample.response_mask);
  });
});

describe("forks of a running rollout and of a fork", () => {
  it("forks a parent while it runs, at a step it has committed, and the parent runs on to its own end", async () => {
    const parentId = uniqueId("tree-live");
    await postRollout({
      agent: "test-snapshot",
      rollout_id: parentId,
      task: { problem: "Count slowly.", extra_args: { step_sleep_ms: 150 } },
      config: { max_steps: 4 },
    });
    await waitFor("the parent's first commit", async () => {
      const view = await getRollout(parentId);
      return view.trajectory.steps.length >= 1 && view.status === "running" ? view : undefined;
    });
    const response = await fork(parentId, { at_step: 1, n: 1 });
    expect(response.status).toBe(202);
    const child = await waitForEnd(((await response.json()) as ForkAnswer).children[0]!.rollout_id);
    const parent = await waitForEnd(parentId);
    expect([
      parent.termination_reason,
      parent.trajectory.steps.length,
      child.termination_reason,
      child.trajectory.steps.length,
    ]).toEqual(["MAX_STEPS", 4, "MAX_STEPS", 4]);
    expect(tokensOf(child.llm_calls[0]!)).toEqual(tokensOf(parent.llm_calls[0]!));
    expect(child.trajectory.steps[1]!.info).toMatchObject({ turn: 2 });
  });

  it("forks a fork: the grandchild keeps the root, extends the path and shares the root's and the child's steps", async () => {
    const root = await runParent("test-snapshot", "tree-deep");
    const [child] = await forkAndRun(root, 1, 1);
    const response = await fork(child!.rollout_id, { at_step: 3, n: 1, config: { max_steps: 5 } });
    expect(response.status).toBe(202);
    const grandchild = await waitForEnd(
      ((await response.json()) as ForkAnswer).children[0]!.rollout_id,
    );
    expect(grandchild.tree).toMatchObject({
      root: root.rollout_id,
      parent: child!.rollout_id,
      branch_step: 3,
      path: [root.rollout_id, child!.rollout_id, grandchild.rollout_id],
    });
    expect(grandchild.llm_calls.slice(0, 3).map(tokensOf)).toEqual(
      child!.llm_calls.slice(0, 3).map(tokensOf),
    );
    expect(tokensOf(grandchild.llm_calls[0]!)).toEqual(tokensOf(root.llm_calls[0]!));
    expect(grandchild.llm_calls.slice(0, 3).map((call) => call.forked_from)).toEqual(
      child!.llm_calls.slice(0, 3).map((call) => call.call_id),
    );
    expect(grandchild.trajectory.steps[3]!.info).toMatchObject({ turn: 4 });
  });
});

describe("the dashboard's rollout pages", () => {
  it("link a parent to its children at the branch step, and a child to its parent", async () => {
    const parent = await runParent("test-loop", "tree-pages");
    const child = (
      (await (await fork(parent.rollout_id, { at_step: 1, n: 1 })).json()) as ForkAnswer
    ).children[0]!.rollout_id;
    const page = async (id: string) => {
      const response = await api(`/rollouts/${id}?fragment=1`);
      expect(response.status).toBe(200);
      return response.text();
    };
    expect(await page(parent.rollout_id)).toMatch(
      new RegExp(
        `data-branch-step="1">at step 1: <a href="/rollouts/${child}" data-field="fork-child">`,
      ),
    );
    const childPage = await page(child);
    expect(childPage).toContain(
      `<a href="/rollouts/${parent.rollout_id}" data-field="tree-parent">`,
    );
    expect(childPage).toContain(`at step <span data-field="branch-step">1</span>`);
    await waitForEnd(child);
  });
});

describe("POST /v1/rollouts/:id/fork refuses", () => {
  it("n outside 1..64, rollout_ids not n long, and a config field out of range (422 naming the field)", async () => {
    const id = uniqueId("tree-bad");
    await createByHand(id);
    await expectProblem(await fork(id, { at_step: 0, n: 0 }), 422, "n");
    await expectProblem(await fork(id, { at_step: 0, n: 65 }), 422, "n");
    await expectProblem(
      await fork(id, { at_step: 0, n: 2, rollout_ids: [uniqueId("c")] }),
      422,
      "rollout_ids",
    );
    await expectProblem(await fork(id, { at_step: -1 }), 422, "at_step");
    await expectProblem(
      await fork(id, { at_step: 0, config: { max_steps: 0 } }),
      422,
      "config.max_steps",
    );
    await expectProblem(await fork(id, { at_step: 0, config: { max_turns: 3 } }), 422, "config");
  });

  it("a step the running parent has not committed yet (409), and one past a finished parent's steps (422)", async () => {
    const running = uniqueId("tree-running");
    await createByHand(running);
    expect(await expectProblem(await fork(running, { at_step: 1 }), 409, "at_step")).toContain(
      "not committed yet",
    );
    const finished = await runParent("test-loop", "tree-beyond");
    expect(
      await expectProblem(
        await fork(finished.rollout_id, { at_step: 4, config: { max_steps: 9 } }),
        422,
        "at_step",
      ),
    ).toContain("at_step must be <= 3");
    expect(
      await expectProblem(await fork(finished.rollout_id, { at_step: 3 }), 422, "at_step"),
    ).toContain("config.max_steps");
  });

  it("a child id already taken by another rollout (409), but answers a repeated fork with the same children (200)", async () => {
    const parent = await runParent("test-loop", "tree-taken");
    const taken = uniqueId("tree-taken-child");
    expect(
      (await postRollout({ agent: "test-loop", rollout_id: taken, task: { problem: "other" } }))
        .status,
    ).toBe(202);
    await expectProblem(
      await fork(parent.rollout_id, { at_step: 1, rollout_ids: [taken] }),
      409,
      "rollout_ids.0",
    );
    await expectProblem(
      await fork(parent.rollout_id, { at_step: 1, rollout_ids: [parent.rollout_id] }),
      409,
      "rollout_ids.0",
    );
    const body = { at_step: 1, n: 1, rollout_ids: [uniqueId("tree-child")] };
    expect((await fork(parent.rollout_id, body)).status).toBe(202);
    const repeated = await fork(parent.rollout_id, body);
    expect(repeated.status).toBe(200);
    expect(((await repeated.json()) as ForkAnswer).children.map((child) => child.created)).toEqual([
      false,
    ]);
    expect((await getRollout(parent.rollout_id)).forks.map((record) => record.children)).toEqual([
      body.rollout_ids,
    ]);
    await Promise.all([taken, ...body.rollout_ids].map((id) => waitForEnd(id)));
  });

  it("agents that cannot fork (an attempt-style function agent, an external agent) with 422 and the reason, and an unknown parent with 404", async () => {
    const fn = (
      (await (
        await postRollout({
          agent: "authoring-fn-math",
          rollout_id: uniqueId("tree-fn"),
          task: { problem: "1+1", ground_truth: "2" },
        })
      ).json()) as { rollout_id: string }
    ).rollout_id;
    expect(await expectProblem(await fork(fn, { at_step: 0 }), 422, "rollout_id")).toContain(
      "function agent",
    );
    const external = (
      (await (await postRollout({ agent: "external", task: { problem: "p" } })).json()) as {
        rollout_id: string;
      }
    ).rollout_id;
    expect(await expectProblem(await fork(external, { at_step: 0 }), 422, "rollout_id")).toContain(
      "external",
    );
    expect((await fork(uniqueId("tree-nobody"), { at_step: 0 })).status).toBe(404);
    // Nothing left running into the next file (or the teardown): the function agent's code runs in this isolate.
    await api(`/v1/rollouts/${external}/cancel`, { method: "POST" });
    await waitForEnd(fn);
  });
});
