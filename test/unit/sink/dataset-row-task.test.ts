import { describe, expect, it } from "vitest";
import { rowToTask } from "../../../src/runtime/batch/row-task";
import { DatasetRow, type DatasetRowInput } from "../../../src/schemas/batch";

function row(input: Partial<DatasetRowInput> & Record<string, unknown> = {}): DatasetRow {
  return DatasetRow.parse({
    prompt: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is 6 * 7?" },
    ],
    data_source: "openai/gsm8k",
    ability: "math",
    reward_model: { style: "rule", ground_truth: "42" },
    extra_info: { split: "train", index: 17, tools_kwargs: { calc: { create_kwargs: {} } } },
    ...input,
  });
}

describe("rowToTask", () => {
  it("takes the last user message as the problem and keeps the whole chat in extra_args.prompt", () => {
    const mapped = rowToTask(row(), 3, "math");
    if (!mapped.ok) throw new Error(mapped.message);
    expect(mapped.agent).toBe("math");
    expect(mapped.task).toMatchObject({
      task_id: "17",
      prompt_id: "17",
      sample_id: 0,
      agent_name: "math",
      problem: "What is 6 * 7?",
      ground_truth: "42",
    });
    expect(mapped.task.extra_args).toMatchObject({
      prompt: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "What is 6 * 7?" },
      ],
      data_source: "openai/gsm8k",
      ability: "math",
      reward_model: { style: "rule" },
      extra_info: { split: "train", index: 17, tools_kwargs: { calc: { create_kwargs: {} } } },
    });
  });

  it("keeps the label out of extra_args: only ground_truth carries it (issue 10 item 10)", () => {
    const mapped = rowToTask(
      row({ reward_model: { style: "rule", ground_truth: "secret-42" } }),
      0,
      "math",
    );
    if (!mapped.ok) throw new Error(mapped.message);
    expect(mapped.task.ground_truth).toBe("secret-42");
    expect(JSON.stringify(mapped.task.extra_args)).not.toContain("secret-42");
  });

  it("falls back to the row index for ids and lets agent_name override the batch agent", () => {
    const mapped = rowToTask(row({ extra_info: {}, agent_name: "calculator" }), 5, "math");
    expect(mapped).toMatchObject({
      ok: true,
      agent: "calculator",
      task: { task_id: "5", prompt_id: "5", agent_name: "calculator" },
    });
  });

  it("reads a bare-string prompt as one user message and passes unknown columns through", () => {
    const mapped = rowToTask(row({ prompt: "Count to 3.", done_after: 2 }), 0, "math");
    expect(mapped).toMatchObject({
      ok: true,
      task: {
        problem: "Count to 3.",
        extra_args: { done_after: 2, prompt: [{ role: "user", content: "Count to 3." }] },
      },
    });
  });

  it("refuses a prompt without a user message, naming the field", () => {
    expect(
      rowToTask(row({ prompt: [{ role: "system", content: "Only rules." }] }), 0, "math"),
    ).toEqual({ ok: false, field: "prompt", message: "prompt must contain a user message" });
  });

  it("keeps structured ground truth as given", () => {
    const mapped = rowToTask(
      row({ reward_model: { ground_truth: { answers: ["42", "forty-two"] } } }),
      0,
      "math",
    );
    expect(mapped.ok && mapped.task.ground_truth).toEqual({ answers: ["42", "forty-two"] });
  });
});
