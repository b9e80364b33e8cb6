/** Integration: `POST /v1/rollouts` idempotency and validation, reads of unknown rollouts, problem+json. */
import { describe, expect, it } from "vitest";
import "../../fixtures/test-agents";
import { api, postRollout, uniqueId } from "../../fixtures/rollouts";

interface Problem {
  type: string;
  status: number;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}

/** Asserts a problem+json response with `status` and returns its body. */
async function expectProblem(response: Response, status: number): Promise<Problem> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const problem = (await response.json()) as Problem;
  expect(problem.status).toBe(status);
  return problem;
}

const task = { problem: "What is 2 + 3?", ground_truth: "5" };

describe("POST /v1/rollouts", () => {
  it("accepts a new rollout with 202, its id and status", async () => {
    const rolloutId = uniqueId("api-new");
    const response = await postRollout({ agent: "math", task, rollout_id: rolloutId });
    expect(response.status).toBe(202);
    const body = (await response.json()) as {
      rollout_id: string;
      status: string;
      created: boolean;
      links: { self: string };
    };
    expect(body).toMatchObject({
      rollout_id: rolloutId,
      status: "queued",
      created: true,
      links: { self: `/v1/rollouts/${rolloutId}` },
    });
  });

  it("generates a rollout id when none is given", async () => {
    const first = (await (await postRollout({ agent: "math", task })).json()) as {
      rollout_id: string;
    };
    const second = (await (await postRollout({ agent: "math", task })).json()) as {
      rollout_id: string;
    };
    expect(first.rollout_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.rollout_id).not.toBe(first.rollout_id);
  });

  it("answers 200 created:false when the same rollout is posted again", async () => {
    const body = { agent: "math", task, rollout_id: uniqueId("api-again") };
    expect((await postRollout(body)).status).toBe(202);
    const again = await postRollout(body);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ rollout_id: body.rollout_id, created: false });
  });

  it("answers 409 when the same rollout id arrives with a different task", async () => {
    const rolloutId = uniqueId("api-conflict");
    expect((await postRollout({ agent: "math", task, rollout_id: rolloutId })).status).toBe(202);
    const problem = await expectProblem(
      await postRollout({
        agent: "math",
        task: { ...task, problem: "What is 3 + 4?" },
        rollout_id: rolloutId,
      }),
      409,
    );
    expect(problem.type).toBe("urn:edge-rollout:problem:conflict");
    expect(problem.detail).toContain(rolloutId);
  });

  it("answers 400 for a body that is not JSON", async () => {
    const problem = await expectProblem(await postRollout("{ agent: math"), 400);
    expect(problem.detail).toBe("request body is not valid JSON");
  });

  it.each([
    ["a missing task.problem", { agent: "math", task: { ground_truth: "5" } }, "task.problem"],
    [
      "config.max_steps below 1",
      { agent: "math", task, config: { max_steps: 0 } },
      "config.max_steps",
    ],
    [
      "a non-integer config.max_response_length",
      { agent: "math", task, config: { max_response_length: 1.5 } },
      "config.max_response_length",
    ],
    [
      "an unknown config field",
      { agent: "math", task, config: { max_turns: 3 } },
      "config.max_turns",
    ],
    ["an unknown agent", { agent: "no-such-agent", task }, "agent"],
    ["a rollout_id with a slash", { agent: "math", task, rollout_id: "a/b" }, "rollout_id"],
  ])("answers 422 naming the field for %s", async (_case, body, path) => {
    const problem = await expectProblem(await postRollout(body), 422);
    expect(problem.errors?.map((error) => error.path)).toContain(path);
  });

  it("answers 422 for an unknown top-level field, naming it", async () => {
    const problem = await expectProblem(
      await postRollout({ agent: "math", task, priority: "high" }),
      422,
    );
    expect(problem.errors).toEqual([{ path: "priority", message: 'unknown field "priority"' }]);
  });

  it("names the limit in the message of a config violation", async () => {
    const problem = await expectProblem(
      await postRollout({ agent: "math", task, config: { max_steps: 0 } }),
      422,
    );
    expect(problem.errors).toContainEqual({
      path: "config.max_steps",
      message: "max_steps must be >= 1",
    });
  });
});

describe("reading rollouts", () => {
  it("answers 404 problem+json for an unknown rollout", async () => {
    const rolloutId = uniqueId("api-missing");
    const problem = await expectProblem(await api(`/v1/rollouts/${rolloutId}`), 404);
    expect(problem.detail).toBe(`rollout ${rolloutId} does not exist`);
  });

  it("answers 404 to events and cancel of an unknown rollout", async () => {
    const rolloutId = uniqueId("api-missing");
    await expectProblem(await api(`/v1/rollouts/${rolloutId}/events`), 404);
    await expectProblem(await api(`/v1/rollouts/${rolloutId}/cancel`, { method: "POST" }), 404);
  });

  it("answers 400 naming rollout_id for a malformed id in the path", async () => {
    const problem = await expectProblem(
      await api(`/v1/rollouts/${encodeURIComponent("bad id!")}`),
      400,
    );
    expect(problem.errors?.[0]?.path).toBe("rollout_id");
  });

  it("answers 404 problem+json for an unknown route", async () => {
    const problem = await expectProblem(await api("/v1/nothing-here"), 404);
    expect(problem.detail).toBe("no route for GET /v1/nothing-here");
  });

  it("lists the registered agents, test agents included", async () => {
    const response = await api("/v1/agents");
    expect(response.status).toBe(200);
    const { agents } = (await response.json()) as { agents: string[] };
    expect(agents).toEqual(
      expect.arrayContaining(["calculator", "math", "test-loop", "test-snapshot"]),
    );
  });
});
