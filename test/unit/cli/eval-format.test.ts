import { describe, expect, it } from "vitest";
import { formatEvalReport } from "../../../tools/cli/eval-format";
import type { EvalReport } from "../../../src/schemas/eval-report";

function report(batch_id: string, pass1: number, failures: Record<string, number>): EvalReport {
  const total = { rows: 2, samples: 8, pass_at_1: pass1, pass_at_k: 1, mean_reward: pass1 };
  return {
    batch_id,
    agent: "calculator",
    mode: "val",
    n: 4,
    k: 4,
    pass_threshold: 1,
    done: true,
    total,
    by_data_source: [{ data_source: "gsm8k", ...total }],
    failures,
  };
}

describe("formatEvalReport (unit)", () => {
  it("prints one run's pass@1, pass@k, mean reward and failures", () => {
    const text = formatEvalReport(report("run-b", 0.75, { ENV_DONE: 2 }));
    expect(text).toMatch(/\(all\)\s+0\.750\s+1\.000\s+0\.750\s+8/);
    expect(text).toMatch(/gsm8k\s+0\.750/);
    expect(text).toMatch(/ENV_DONE\s+2/);
  });

  it("puts a compared run beside it, with the pass@1 difference", () => {
    const text = formatEvalReport(
      report("run-b", 0.75, { ENV_DONE: 2 }),
      report("run-a", 0.5, { MAX_STEPS: 4 }),
    );
    expect(text).toMatch(/\(all\)\s+0\.750\s+1\.000\s+0\.750\s+8\s+0\.500\s+1\.000\s+0\.500\s+8/);
    expect(text).toMatch(/MAX_STEPS\s+0\s+4/);
    expect(text).toContain("pass@1 difference (run-b − run-a): +0.250");
  });
});
