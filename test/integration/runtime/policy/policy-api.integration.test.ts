/** Integration: `GET/PUT /v1/policy` and `/v1/resources` over HTTP, with problem+json for bad input. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PolicyView } from "../../../../src/schemas/policy";
import type { PolicyState } from "../../../../src/runtime/policy/policy-state";
import { api, uniqueId } from "../../../fixtures/rollouts";
import { readPolicyState, restorePolicyState } from "../../fixtures/policy-fixtures";

interface Problem {
  type: string;
  status: number;
  errors?: Array<{ path: string; message: string }>;
}

/** Asserts a problem+json response with `status` and returns its body. */
async function expectProblem(response: Response, status: number): Promise<Problem> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as Problem;
}

function putJson(path: string, body: unknown): Promise<Response> {
  return api(path, { method: "PUT", body: typeof body === "string" ? body : JSON.stringify(body) });
}

let saved: PolicyState;
beforeAll(async () => void (saved = await readPolicyState()));
afterAll(() => restorePolicyState(saved));

describe("/v1/policy", () => {
  it("answers the defaults before anyone configured the policy", async () => {
    const response = await api("/v1/policy");
    expect(response.status).toBe(200);
    const view = (await response.json()) as PolicyView;
    expect(view).toMatchObject({
      policy_version: 0,
      model: null,
      backend: null,
      sampling: { temperature: 1, top_p: 1 },
      syncing: null,
    });
    expect(view.in_flight).toBe(0);
  });

  it("changes only the fields a PUT names, merging sampling keys, and keeps the version", async () => {
    const first = await putJson("/v1/policy", {
      model: "policy-a",
      sampling: { temperature: 0.7 },
    });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({
      model: "policy-a",
      backend: null,
      sampling: { temperature: 0.7, top_p: 1 },
      policy_version: 0,
    });
    const second = await putJson("/v1/policy", {
      backend: { name: "vllm", replicas: ["http://127.0.0.1:9/v1"] },
      sampling: { top_p: 0.9 },
    });
    expect(await second.json()).toMatchObject({
      model: "policy-a",
      backend: { name: "vllm", replicas: ["http://127.0.0.1:9/v1"], load_factor: 1.25 },
      sampling: { temperature: 0.7, top_p: 0.9 },
    });
    const reset = await putJson("/v1/policy", { model: null, backend: null });
    expect(await reset.json()).toMatchObject({
      model: null,
      backend: null,
      sampling: { temperature: 0.7, top_p: 0.9 },
    });
  });

  it("refuses out-of-range sampling, bad replica URLs and unknown fields with 422 naming each", async () => {
    const problem = await expectProblem(
      await putJson("/v1/policy", {
        sampling: { temperature: 3 },
        backend: { name: "vllm", replicas: ["ftp://x"] },
        policy_version: 4,
      }),
      422,
    );
    expect(problem.errors?.map((e) => e.path).sort()).toEqual([
      "backend.replicas.0",
      "policy_version",
      "sampling.temperature",
    ]);
    expect(problem.errors?.find((e) => e.path === "sampling.temperature")?.message).toBe(
      "temperature must be <= 2",
    );
    expect((await readPolicyState()).sampling.temperature).not.toBe(3);
  });

  it("answers 400 for a body that is not JSON", async () => {
    await expectProblem(await putJson("/v1/policy", "{ model:"), 400);
  });

  it("answers 409 to sync/end when no sync is under way, and 422 for a bad version", async () => {
    const post = (body: unknown) =>
      api("/v1/policy/sync/end", { method: "POST", body: JSON.stringify(body) });
    const conflict = await expectProblem(await post({ policy_version: 99 }), 409);
    expect(conflict.errors?.[0]?.path).toBe("policy_version");
    expect((await expectProblem(await post({ policy_version: -1 }), 422)).errors?.[0]?.path).toBe(
      "policy_version",
    );
  });
});

describe("/v1/resources", () => {
  it("appends immutable versions and reads the latest or any one by number", async () => {
    const name = uniqueId("prompt");
    const first = await putJson(`/v1/resources/${name}`, { template: "v1 {x}" });
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ name, version: 1, id: `${name}@1` });
    expect(first.headers.get("location")).toBe(`/v1/resources/${name}/versions/1`);
    expect(await (await putJson(`/v1/resources/${name}`, ["v2"])).json()).toEqual({
      name,
      version: 2,
      id: `${name}@2`,
    });
    expect(await (await api(`/v1/resources/${name}`)).json()).toMatchObject({
      name,
      version: 2,
      id: `${name}@2`,
      value: ["v2"],
    });
    expect(await (await api(`/v1/resources/${name}/versions/1`)).json()).toMatchObject({
      version: 1,
      value: { template: "v1 {x}" },
    });
    const view = (await (await api("/v1/policy")).json()) as PolicyView;
    expect(view.resources).toContainEqual({ name, version: 2 });
  });

  it("answers 404 for an unknown resource or version, and 400 for a bad name or version", async () => {
    const name = uniqueId("missing");
    await expectProblem(await api(`/v1/resources/${name}`), 404);
    await putJson(`/v1/resources/${name}`, 1);
    await expectProblem(await api(`/v1/resources/${name}/versions/2`), 404);
    expect(
      (await expectProblem(await api(`/v1/resources/${name}/versions/zero`), 400)).errors?.[0]
        ?.path,
    ).toBe("version");
    expect(
      (await expectProblem(await putJson(`/v1/resources/${"x".repeat(65)}`, 1), 400)).errors?.[0]
        ?.path,
    ).toBe("name");
  });
});
