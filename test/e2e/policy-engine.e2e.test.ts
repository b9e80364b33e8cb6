/**
 * Integration (real processes): the simulator's vLLM wire in front of a real PyTorch policy
 * (`python3 -m edge_rollout.learn.engine_server`, the token source of docs/vllm.md): what the
 * openai client gets back is what the policy sampled, its log-probs are what the trainer's
 * recompute gives under the same weights, and weights reload through
 * `/update_weights_from_disk` whole or not at all.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../tools/simulator";
import { printedUrl } from "../../bench/kit/simulator-process";

const PYTHON_ROOT = resolve(import.meta.dirname, "../../clients/python");
// The digits "0".."9" and <|im_end|> in Qwen3's vocabulary: all the policy may emit.
const OUT_IDS = [15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 151645];

function python(code: string, input = ""): string {
  const run = spawnSync("python3", ["-c", code], { cwd: PYTHON_ROOT, input, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`python3 failed: ${run.stderr}`);
  return run.stdout;
}
const checkpoint = (path: string, seed: number) =>
  python(
    `from edge_rollout.learn.policy import create_policy\nfrom edge_rollout.learn.checkpoint import save_checkpoint\n` +
      `save_checkpoint(create_policy(${JSON.stringify(OUT_IDS)}, seed=${seed}), ${JSON.stringify(path)})`,
  );
function recompute(path: string, items: Array<{ prompt_ids: number[]; response_ids: number[] }>) {
  const out = python(
    "from edge_rollout.learn.recompute import main; main()",
    JSON.stringify({ checkpoint: path, temperature: 1, items }),
  );
  return (JSON.parse(out) as { logprobs: number[][] }).logprobs;
}

describe("the simulator in front of a real policy engine", () => {
  let dir: string;
  let engine: ChildProcess;
  let sim: VllmSimulator;
  let client: OpenAI;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "policy-engine-"));
    checkpoint(join(dir, "v0.pt"), 1);
    engine = spawn(
      "python3",
      ["-m", "edge_rollout.learn.engine_server", "--checkpoint", join(dir, "v0.pt"), "--port", "0"],
      { cwd: PYTHON_ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    const url = await printedUrl(engine);
    sim = await startVllmSimulator({ port: 0, engine: { tokenSourceUrl: url } });
    client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "unused", maxRetries: 0 });
  }, 60_000);
  afterAll(async () => {
    await sim?.close();
    engine?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One chat call: its prompt ids, the sampled ids and their log-probs. */
  async function call(key: string, stream = false) {
    const body = {
      model: "sim-qwen3",
      messages: [{ role: "user" as const, content: `Pick a number (${key}).` }],
      max_tokens: 8,
      logprobs: true,
      ...({ return_token_ids: true } as object),
    };
    const options = { headers: { "x-sample-key": key } };
    if (!stream) {
      const reply = await client.chat.completions.create(body, options);
      const choice = reply.choices[0] as unknown as {
        token_ids: number[];
        logprobs: { content: Array<{ logprob: number }> };
      };
      const prompt = (reply as unknown as { prompt_token_ids: number[] }).prompt_token_ids;
      return {
        prompt,
        ids: choice.token_ids,
        logprobs: choice.logprobs.content.map((e) => e.logprob),
      };
    }
    const ids: number[] = [];
    const logprobs: number[] = [];
    let prompt: number[] = [];
    for await (const chunk of await client.chat.completions.create(
      { ...body, stream: true },
      options,
    )) {
      const extra = chunk as unknown as { prompt_token_ids?: number[] | null };
      if (extra.prompt_token_ids) prompt = extra.prompt_token_ids;
      const choice = chunk.choices[0] as unknown as
        { token_ids?: number[]; logprobs?: { content: Array<{ logprob: number }> } } | undefined;
      ids.push(...(choice?.token_ids ?? []));
      logprobs.push(...(choice?.logprobs?.content.map((e) => e.logprob) ?? []));
    }
    return { prompt, ids, logprobs };
  }

  it("answers what the policy sampled, with log-probs the trainer recomputes to 1e-5, streamed or not", async () => {
    const calls = await Promise.all([
      call("a:0"),
      call("a:1"),
      call("a:2", true),
      call("a:0", true),
    ]);
    for (const c of calls) expect(c.ids.every((id) => OUT_IDS.includes(id))).toBe(true);
    // A keyed call repeats its draws, streamed or not.
    expect(calls[3]!.ids).toEqual(calls[0]!.ids);
    const again = recompute(
      join(dir, "v0.pt"),
      calls.map((c) => ({ prompt_ids: c.prompt, response_ids: c.ids })),
    );
    const gaps = calls.flatMap((c, i) => c.logprobs.map((lp, t) => Math.abs(lp - again[i]![t]!)));
    expect(gaps.length).toBeGreaterThan(4);
    expect(Math.max(...gaps)).toBeLessThan(1e-5);
  });

  it("reloads weights whole through /update_weights_from_disk, and refuses a broken file keeping the old ones", async () => {
    checkpoint(join(dir, "v1.pt"), 2);
    writeFileSync(join(dir, "broken.pt"), readFileSync(join(dir, "v1.pt")).subarray(0, 200));
    const update = async (path: string, version: number | string) => {
      const response = await fetch(`${sim.url}/update_weights_from_disk`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model_path: path, weight_version: version }),
      });
      return {
        status: response.status,
        body: (await response.json()) as { success: boolean; message: string },
      };
    };
    const refused = await update(join(dir, "broken.pt"), 1);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      success: false,
      message: expect.stringMatching(/not a readable checkpoint/),
    });
    const before = await call("b:0");
    expect(
      Math.max(
        ...before.logprobs.map((lp, t) =>
          Math.abs(
            lp -
              recompute(join(dir, "v0.pt"), [
                { prompt_ids: before.prompt, response_ids: before.ids },
              ])[0]![t]!,
          ),
        ),
      ),
    ).toBeLessThan(1e-5);
    expect((await update(join(dir, "v1.pt"), "1")).body).toMatchObject({ success: true });
    const after = await call("b:0");
    const underNew = recompute(join(dir, "v1.pt"), [
      { prompt_ids: after.prompt, response_ids: after.ids },
    ])[0]!;
    expect(Math.max(...after.logprobs.map((lp, t) => Math.abs(lp - underNew[t]!)))).toBeLessThan(
      1e-5,
    );
    expect((await update("", 2)).body.message).toMatch(/model_path/);
  });
});
