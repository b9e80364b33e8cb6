/**
 * @module What bench:learn prepares before training: the task's rows (verl's RL format), their
 * prompts as the model server's chat template renders them, and the starting checkpoint from the
 * seeded warm-up (python3 -m edge_rollout.learn.warmup).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The Python package's root, where `python3 -m edge_rollout…` runs. */
export const PYTHON_ROOT = resolve(import.meta.dirname, "../../clients/python");
/** Qwen3's <|im_end|>: the policy's EOS. */
export const EOS_ID = 151645;

/** One dataset row in verl's RL format for the `digits` agent: copy `digits`, one per turn. */
export function digitsRow(digits: string, index: number): Record<string, unknown> {
  return {
    data_source: "edge-rollout/digits",
    prompt: [{ role: "user", content: `Copy the digit ${digits[0]}.` }],
    ability: "copy",
    reward_model: { style: "rule", ground_truth: digits },
    extra_info: { split: "train", index, turns: digits.length },
  };
}

/** Every row of `turns` digits (10 or 100 rows), in a seeded order. */
export function digitsRows(turns: 1 | 2, seed: number): Array<Record<string, unknown>> {
  const all = Array.from({ length: 10 ** turns }, (_, i) => String(i).padStart(turns, "0"));
  let state = seed * 2654435761 + 1;
  for (let i = all.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all.map(digitsRow);
}

async function tokenize(modelUrl: string, body: unknown): Promise<number[]> {
  const response = await fetch(`${modelUrl}/tokenize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok)
    throw new Error(`/tokenize answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { tokens: number[] }).tokens;
}

/** The digits' ids and EOS: all the policy may emit. */
export async function outputIds(modelUrl: string): Promise<number[]> {
  const digits = await Promise.all(
    Array.from({ length: 10 }, (_, d) => tokenize(modelUrl, { prompt: String(d) })),
  );
  if (digits.some((ids) => ids.length !== 1)) throw new Error("a digit is not one token");
  return [...digits.map((ids) => ids[0]!), EOS_ID];
}

/**
 * Writes the warm-up data (each first-turn prompt as the template renders it, its answer and EOS)
 * and runs the seeded warm-up; answers the answer probability it stopped at.
 */
export async function warmUp(
  modelUrl: string,
  workdir: string,
  out: number[],
  seed: number,
  target: number,
): Promise<number> {
  const items = await Promise.all(
    Array.from({ length: 10 }, async (_, d) => ({
      prompt_ids: await tokenize(modelUrl, {
        messages: [{ role: "user", content: `Copy the digit ${d}.` }],
        add_generation_prompt: true,
      }),
      answer_ids: [out[d]!, EOS_ID],
    })),
  );
  writeFileSync(join(workdir, "warmup.json"), JSON.stringify({ out_ids: out, items }));
  const run = spawnSync(
    "python3",
    [
      "-m",
      "edge_rollout.learn.warmup",
      "--data",
      join(workdir, "warmup.json"),
      "--out",
      join(workdir, "policy-v0.pt"),
      "--seed",
      String(seed),
      "--target",
      String(target),
    ],
    { cwd: PYTHON_ROOT, encoding: "utf8" },
  );
  if (run.status !== 0) throw new Error(`warm-up failed: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { answer_probability: number }).answer_probability;
}
