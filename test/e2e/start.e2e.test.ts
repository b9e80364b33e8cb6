import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { freePort } from "../../tools/simulator/free-port";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const tsx = createRequire(import.meta.url).resolve("tsx/cli");

describe("npm start --once (end to end, Miniflare's API + simulator)", () => {
  it("runs the demo set of the four agents with Qwen3's tokenizer, prints the summary with non-zero mean rewards and exits 0", async () => {
    const port = await freePort();
    const { stdout } = await run(
      process.execPath,
      [tsx, "scripts/start.ts", "--once", "--port", String(port), "--simulator-port", "0"],
      {
        cwd: root,
        timeout: 120_000,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      },
    );
    const rows = Object.fromEntries(
      stdout
        .split("\n")
        .filter((line) => /^(math|calculator|js-coder|dialogue)\s/.test(line))
        .map((line) => {
          const [
            agent,
            rollouts,
            ok,
            meanReward,
            meanSteps,
            ,
            completionTokens,
            samples,
            driftSplits,
            trainedTokens,
          ] = line.split(/\s+/);
          const counts = {
            completionTokens: Number(completionTokens),
            samples: Number(samples),
            driftSplits: Number(driftSplits),
            trainedTokens: Number(trainedTokens),
          };
          return [
            agent,
            {
              rollouts: Number(rollouts),
              ok: Number(ok),
              meanReward: Number(meanReward),
              meanSteps: Number(meanSteps),
              ...counts,
            },
          ];
        }),
    );
    expect(stdout).toContain("tokenizer qwen3");
    expect(rows.math).toMatchObject({ rollouts: 8, ok: 8, meanSteps: 1 });
    expect(rows.calculator).toMatchObject({ rollouts: 8, ok: 8, meanSteps: 2 });
    expect(rows.math.meanReward).toBeGreaterThan(0);
    expect(rows.calculator.meanReward).toBeGreaterThan(0);
    // js-coder's snippets ran in the supervised sandbox host; its reward is a share of passing tests.
    expect(rows["js-coder"]).toMatchObject({ rollouts: 8, ok: 8 });
    expect(rows["js-coder"].meanReward).toBeGreaterThan(0);
    expect(rows["js-coder"].meanReward).toBeLessThanOrEqual(1);
    // Multi-turn reasoning: each prompt lost the previous reply's <think> (Qwen3's template), so every
    // call after the first starts a new sample; the calculator's tool turn keeps its reasoning
    // (it follows the last user query), so its two calls stay one sample.
    expect(rows.dialogue).toMatchObject({
      rollouts: 2,
      ok: 2,
      meanSteps: 3,
      samples: 6,
      driftSplits: 4,
    });
    expect(rows.calculator).toMatchObject({ samples: 8, driftSplits: 0 });
    // Every model token trains once (mask 1) and no template or tool token does, in every sample.
    for (const agent of ["math", "calculator", "dialogue"])
      expect(rows[agent].trainedTokens, agent).toBe(rows[agent].completionTokens);
    expect(stdout).toMatch(/26 rollouts in [\d.]+ s wall time/);
    // --once has stopped the stack by now: no hint that points at it.
    expect(stdout).not.toContain("Inspect one");
    expect(stdout).not.toContain("Serving at");
  }, 150_000);
});
