/**
 * Integration: inputs that used to be accepted and then lost or answered 500 (issue 10 items 1, 4,
 * 6, 10, 11), each refused up front with problem+json naming the field, or kept from leaking.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import "../../fixtures/authoring-agents";
import { workflowSaw } from "../../fixtures/authoring-agents";
import { calculatorRows, postBatch, waitForBatch } from "../../fixtures/datasets/batch-api";
import { api, postRollout, uniqueId, waitFor } from "../../fixtures/rollouts";
import { POLICY_OBJECT_NAME } from "../../../src/runtime/object-names";

interface Problem {
  status: number;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}

async function problemOf(response: Response, status: number): Promise<Problem> {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const problem = (await response.json()) as Problem;
  expect({ status: response.status, problem }).toMatchObject({ status, problem: { status } });
  return problem;
}

const paths = (problem: Problem) => (problem.errors ?? []).map((e) => e.path);
const group = (fields: Record<string, unknown> = {}) => ({
  uid: uniqueId("g"),
  sample_index: 0,
  group_size: 2,
  data_manager: "train",
  ...fields,
});

describe("unregistered training modes and data managers (item 1)", () => {
  it("refuses a rollout whose group names an unknown training_mode or data_manager with 422 naming the field", async () => {
    const problem = await problemOf(
      await postRollout({
        agent: "external",
        task: { problem: "p" },
        group: group({ training_mode: "verl/hybird", data_manager: "trian" }),
      }),
      422,
    );
    expect(paths(problem)).toEqual(["group.training_mode", "group.data_manager"]);
    expect(problem.detail).toContain("verl/hybird");
  });

  it("refuses a batch with an unknown training_mode or data_manager, by POST and by queue message", async () => {
    const rows = calculatorRows().slice(0, 1);
    const posted = await problemOf(
      await postBatch({ agent: "calculator", rows, n: 1, training_mode: "verl/hybird" }),
      422,
    );
    expect(paths(posted)).toEqual(["training_mode"]);
    expect(
      paths(
        await problemOf(
          await postBatch({ agent: "calculator", rows, n: 1, data_manager: "trian" }),
          422,
        ),
      ),
    ).toEqual(["data_manager"]);
    const [typo, control] = [uniqueId("typo"), uniqueId("control")];
    await env.ROLLOUT_BATCHES.sendBatch([
      { body: { batch_id: typo, agent: "calculator", rows, n: 1, training_mode: "verl/hybird" } },
      { body: { batch_id: control, agent: "calculator", rows, n: 1 } },
    ]);
    // Both messages are consumed together: once the control batch exists, the typo was refused (logged), never started.
    await waitFor("the control batch", async () =>
      (await api(`/v1/batches/${control}`)).status === 200 ? true : undefined,
    );
    expect((await api(`/v1/batches/${typo}`)).status).toBe(404);
  });
});

describe("bounded group fields (item 4)", () => {
  it("refuses a 140,000-character batch_id or training_mode with 422 instead of failing every publication", async () => {
    const long = "x".repeat(140_000);
    const problem = await problemOf(
      await postRollout({
        agent: "external",
        task: { problem: "p" },
        group: group({ training_mode: long }),
      }),
      422,
    );
    expect(paths(problem)).toContain("group.training_mode");
    expect(
      paths(
        await problemOf(
          await postBatch({
            agent: "calculator",
            rows: calculatorRows().slice(0, 1),
            n: 1,
            training_mode: long,
          }),
          422,
        ),
      ),
    ).toContain("training_mode");
  });
});

describe("oversized and deeply nested bodies (item 6)", () => {
  it("answers 413 for a 3 MB task.problem, a 2.5 MB span and 2.5 MB finish.messages", async () => {
    await problemOf(
      await postRollout({ agent: "external", task: { problem: "p".repeat(3_000_000) } }),
      413,
    );
    const created = (await (
      await postRollout({ agent: "external", rollout_id: uniqueId("big"), task: { problem: "p" } })
    ).json()) as { rollout_id: string };
    const span = { kind: "annotation", name: "big", value: "s".repeat(2_500_000) };
    await problemOf(
      await api(`/v1/rollouts/${created.rollout_id}/events`, {
        method: "POST",
        body: JSON.stringify({ events: [span] }),
      }),
      413,
    );
    const messages = [{ role: "user", content: "m".repeat(2_500_000) }];
    await problemOf(
      await api(`/v1/rollouts/${created.rollout_id}/finish`, {
        method: "POST",
        body: JSON.stringify({ reward: 1, messages }),
      }),
      413,
    );
  });

  it("answers 400 for JSON nested 2000 levels deep in a free-form field", async () => {
    const deep = `${"[".repeat(2000)}${"]".repeat(2000)}`;
    const body = `{"agent":"external","task":{"problem":"p","extra_args":{"x":${deep}}}}`;
    const problem = await problemOf(await postRollout(body), 400);
    expect(problem.detail).toContain("nests deeper");
  });
});

describe("ids, groups and secrets (item 11)", () => {
  it("refuses . and .. as rollout ids and batch ids", async () => {
    for (const id of [".", ".."]) {
      expect(
        paths(
          await problemOf(
            await postRollout({ agent: "external", rollout_id: id, task: { problem: "p" } }),
            422,
          ),
        ),
      ).toEqual(["rollout_id"]);
      expect(
        paths(
          await problemOf(
            await postBatch({
              batch_id: id,
              agent: "calculator",
              rows: calculatorRows().slice(0, 1),
              n: 1,
            }),
            422,
          ),
        ),
      ).toEqual(["batch_id"]);
    }
  });

  it("answers 409 when a rollout is created again with a different group", async () => {
    const rolloutId = uniqueId("regroup");
    const body = {
      agent: "external",
      rollout_id: rolloutId,
      task: { problem: "p" },
      group: group(),
    };
    expect((await postRollout(body)).status).toBe(202);
    expect((await postRollout(body)).status).toBe(200);
    await problemOf(await postRollout({ ...body, group: { ...body.group, group_size: 3 } }), 409);
  });

  it("keeps callers out of a batch's groups: no batch_id, no uid of an existing batch", async () => {
    const batchId = uniqueId("owned");
    expect(
      (
        await postBatch({
          batch_id: batchId,
          agent: "calculator",
          rows: calculatorRows().slice(0, 1),
          n: 2,
        })
      ).status,
    ).toBe(202);
    const intruder = await problemOf(
      await postRollout({
        agent: "external",
        task: { problem: "p" },
        group: group({ uid: `${batchId}:0`, group_size: 5 }),
      }),
      409,
    );
    expect(paths(intruder)).toEqual(["group.uid"]);
    expect(
      paths(
        await problemOf(
          await postRollout({
            agent: "external",
            task: { problem: "p" },
            group: group({ batch_id: batchId }),
          }),
          422,
        ),
      ),
    ).toEqual(["group.batch_id"]);
    expect(await waitForBatch(batchId)).toMatchObject({ done: true, counts: { succeeded: 2 } });
  });

  it("never shows a backend api_key in GET /v1/policy, and a read-modify-write keeps the stored key", async () => {
    const backend = {
      name: "openai",
      base_url: "http://127.0.0.1:9/v1",
      api_key: "sk-live-very-secret",
    };
    try {
      const put = await api("/v1/policy", { method: "PUT", body: JSON.stringify({ backend }) });
      expect(await put.text()).not.toContain("sk-live-very-secret");
      const shown = (await (await api("/v1/policy")).json()) as {
        backend: Record<string, unknown>;
      };
      expect(shown.backend).toEqual({ ...backend, api_key: "[redacted]" });
      expect(
        (
          await api("/v1/policy", {
            method: "PUT",
            body: JSON.stringify({ backend: shown.backend }),
          })
        ).status,
      ).toBe(200);
      const stub = env.POLICY_STORE.get(
        env.POLICY_STORE.idFromName(POLICY_OBJECT_NAME),
      ) as unknown as { snapshot(): Promise<{ backend: Record<string, unknown> }> };
      expect((await stub.snapshot()).backend.api_key).toBe("sk-live-very-secret");
    } finally {
      // Later tests in this file call the model through the deployment default.
      expect(
        (await api("/v1/policy", { method: "PUT", body: JSON.stringify({ backend: null }) }))
          .status,
      ).toBe(200);
    }
  });
});

describe("labels (item 10)", () => {
  it("keeps a batch row's reward_model.ground_truth out of a workflow's ctx.metadata", async () => {
    const index = uniqueId("label-row");
    const row = {
      prompt: "What is 9 * 9?",
      reward_model: { style: "rule", ground_truth: "label-8181" },
      extra_info: { index },
      output: "output",
    };
    const batchId = uniqueId("labels");
    expect(
      (await postBatch({ batch_id: batchId, agent: "authoring-workflow", rows: [row], n: 1 }))
        .status,
    ).toBe(202);
    const saw = await waitFor("the workflow to run", async () => workflowSaw.get(index));
    expect(saw.metadata).toMatchObject({ reward_model: { style: "rule" }, extra_info: { index } });
    expect(JSON.stringify(saw.metadata)).not.toContain("label-8181");
    await waitForBatch(batchId);
  });
});
