import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

describe("smoke", () => {
  it("runs a calculator rollout to ENV_DONE through the HTTP API", async () => {
    const created = await exports.default.fetch("http://w/v1/rollouts", {
      method: "POST",
      body: JSON.stringify({ agent: "calculator", task: { problem: "Use the calculator to compute 2 * 3 + 4.", ground_truth: "10" } }),
    });
    expect(created.status).toBe(202);
    const { rollout_id } = (await created.json()) as { rollout_id: string };
    let view: any;
    for (let i = 0; i < 100; i++) {
      view = await (await exports.default.fetch(`http://w/v1/rollouts/${rollout_id}`)).json();
      if (view.status !== "queued" && view.status !== "running") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(view.termination_reason).toBe("ENV_DONE");
    expect(view.trajectory.steps.length).toBeGreaterThanOrEqual(2);
  });
});
