/** Integration: bad batch requests are refused with 4xx naming each field or row, never a crash. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { calculatorRows, postBatch } from "../../../fixtures/datasets/batch-api";
import { api, uniqueId } from "../../../fixtures/rollouts";

interface Problem {
  status: number;
  errors: Array<{ path: string; message: string; row?: number; line?: number; field?: string }>;
}

async function refused(body: unknown, status = 422): Promise<Problem> {
  const response = await postBatch(body);
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return (await response.json()) as Problem;
}

const good = () => ({ agent: "calculator", rows: calculatorRows().slice(0, 2), n: 2 });
const paths = (problem: Problem) => problem.errors.map((error) => error.path);

describe("POST /v1/batches refuses", () => {
  it("bad fields and bad inline rows, naming rows.<i>.<field>", async () => {
    const problem = await refused({
      ...good(),
      n: 0,
      max_concurrent: 5000,
      rows: [calculatorRows()[0], { prompt: [], reward_model: {} }, { prompt: "hi" }],
    });
    expect(paths(problem)).toEqual(
      expect.arrayContaining([
        "n",
        "max_concurrent",
        "rows.1.prompt",
        "rows.1.reward_model.ground_truth",
        "rows.2.reward_model",
      ]),
    );
    expect(paths(problem)).not.toContain("rows.0.prompt");
  });

  it("neither or both of rows and dataset_key, and unknown fields", async () => {
    expect(paths(await refused({ agent: "calculator", n: 1 }))).toEqual(["rows"]);
    expect(paths(await refused({ ...good(), dataset_key: "d/x.jsonl" }))).toEqual(["dataset_key"]);
    expect(paths(await refused({ ...good(), group_size: 4 }))).toEqual(["group_size"]);
    expect(paths(await refused({ ...good(), batch_id: "no spaces allowed" }))).toEqual([
      "batch_id",
    ]);
  });

  it("an unknown agent, for the batch or for one row, and a prompt without a user message", async () => {
    expect(paths(await refused({ ...good(), agent: "nobody" }))).toEqual(["agent"]);
    const [first, second] = calculatorRows();
    const problem = await refused({
      ...good(),
      rows: [
        { ...first, agent_name: "nobody" },
        { ...second, prompt: [{ role: "system", content: "rules only" }] },
      ],
    });
    expect(problem.errors).toEqual([
      { path: "rows.0.agent_name", message: '"nobody" is not registered' },
      { path: "rows.1.prompt", message: "prompt must contain a user message" },
    ]);
  });

  it("a missing dataset object and a dataset with bad rows, by row number", async () => {
    expect(
      await refused({
        agent: "calculator",
        dataset_key: `datasets/${uniqueId("absent")}.jsonl`,
        n: 1,
      }),
    ).toMatchObject({ errors: [{ path: "dataset_key" }] });
    const key = `datasets/${uniqueId("broken")}.jsonl`;
    await env.TRAJECTORIES.put(
      key,
      [
        JSON.stringify(calculatorRows()[0]),
        "{oops",
        JSON.stringify({ prompt: "x", reward_model: {} }),
      ].join("\n"),
    );
    const problem = await refused({ agent: "calculator", dataset_key: key, n: 1 });
    expect(problem.errors).toEqual([
      { path: "dataset_key", row: 1, line: 2, message: "row 1 (line 2): not valid JSON" },
      expect.objectContaining({
        path: "dataset_key",
        row: 2,
        line: 3,
        field: "reward_model.ground_truth",
      }),
    ]);
    expect((await api(`/v1/batches/${uniqueId("never")}`)).status).toBe(404);
  });

  it("malformed JSON (400), and answers 404/400 for unknown or malformed batch ids", async () => {
    expect((await api("/v1/batches", { method: "POST", body: "{not json" })).status).toBe(400);
    expect((await api(`/v1/batches/${uniqueId("missing")}`)).status).toBe(404);
    expect(
      (await api(`/v1/batches/${uniqueId("missing")}/cancel`, { method: "POST" })).status,
    ).toBe(404);
    expect((await api("/v1/batches/bad%20id")).status).toBe(400);
  });
});
