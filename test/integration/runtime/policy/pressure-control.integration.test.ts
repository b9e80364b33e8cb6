/**
 * Integration: rollouts in flight follow KV pressure. The policy object samples a simulator whose
 * 24-block KV cache three long calls overfill (they preempt each other), cuts the budget, and
 * declares sustained overload; a batch's tracker lowers its rollouts in flight to its share and
 * requeues its youngest; when the calls end the budget grows back and the requeued slots run
 * again as `.retry-1`, none of them failed; each requeued run's session publishes it superseded,
 * so the feed waits for the re-run. Alarms are run by hand, so each sample is one step.
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, inject, it } from "vitest";
import { POLICY_OBJECT_NAME } from "../../../../src/runtime/object-names";
import { objects } from "../../../../src/runtime/objects/object-directory";
import type { BatchProgress } from "../../../../src/schemas/batch";
import type { PressureView } from "../../../../src/schemas/pressure";
import { batchRollouts, getBatch, postBatch } from "../../../fixtures/datasets/batch-api";
import { api, getRollout, uniqueId, waitFor } from "../../../fixtures/rollouts";

const sim = inject("pressureSimulatorUrl");
const policyObject = () => env.POLICY_STORE.get(env.POLICY_STORE.idFromName(POLICY_OBJECT_NAME));
const tracker = (batchId: string) => env.BATCH_TRACKER.get(env.BATCH_TRACKER.idFromName(batchId));

async function putPressure(body: unknown): Promise<Response> {
  return api("/v1/policy/pressure", {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function pressure(): Promise<PressureView> {
  return (await (await api("/v1/policy/pressure")).json()) as PressureView;
}

/** Three callers of 350-token calls on the 24-block (384-token) cache, until aborted: each fits alone, together they preempt. */
function overfill(abort: AbortController): Promise<unknown> {
  const caller = async () => {
    while (!abort.signal.aborted)
      await fetch(`${sim}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "sim-qwen3",
          prompt: Array.from({ length: 100 }, (_, i) => 10 + i),
          max_tokens: 250,
          ignore_eos: true,
        }),
        signal: abort.signal,
      }).then(
        (r) => r.text(),
        () => null,
      );
  };
  return Promise.all([caller(), caller(), caller()]);
}

/** One controller sample (the policy object's alarm), then one tracker alarm (its share pull). */
async function step(batchId: string): Promise<{ view: PressureView; progress: BatchProgress }> {
  // Samples a period apart, as the alarm would take them, so preemptions show between two.
  await new Promise((resolve) => setTimeout(resolve, 250));
  await runDurableObjectAlarm(policyObject());
  await runDurableObjectAlarm(tracker(batchId));
  return { view: await pressure(), progress: await getBatch(batchId) };
}

afterAll(async () => {
  // The policy object is shared by the group: control goes back to off and its defaults.
  await putPressure({ enabled: false, metrics_urls: null, period_ms: 2000, overload_samples: 5 });
});

describe("pressure control (integration)", () => {
  it("refuses a config with a field out of range, naming it, as problem+json", async () => {
    const bad = await putPressure({ high_water: 2 });
    expect(bad.status).toBe(422);
    expect(bad.headers.get("content-type")).toContain("application/problem+json");
    expect(JSON.stringify(await bad.json())).toContain("high_water");
    const crossed = await putPressure({ low_water: 0.95 });
    expect(crossed.status).toBe(422);
    expect(JSON.stringify(await crossed.json())).toContain("low_water must be < high_water");
  });

  it("lowers a batch's rollouts in flight under pressure, requeues its youngest, and raises them after", async () => {
    expect(
      (
        await putPressure({
          enabled: true,
          metrics_urls: [`${sim}/metrics`],
          period_ms: 250,
          overload_samples: 2,
        })
      ).status,
    ).toBe(200);
    const batchId = uniqueId("pressure");
    const rows = Array.from({ length: 8 }, (_, i) => ({
      prompt: `Pressure row ${i}.`,
      reward_model: { ground_truth: null },
    }));
    // External rollouts wait for runners that never come: in flight until the tracker acts.
    expect(
      (await postBatch({ batch_id: batchId, agent: "external", rows, n: 1, max_concurrent: 6 }))
        .status,
    ).toBe(202);
    expect((await getBatch(batchId)).in_flight).toBe(6);
    await runDurableObjectAlarm(tracker(batchId)); // the batch asks for its share: it now shares the budget

    const abort = new AbortController();
    const calls = overfill(abort);
    const seen: Array<{ limit: number | null; in_flight: number }> = [];
    const overloaded = await waitFor(
      "sustained overload to requeue the youngest rollouts",
      async () => {
        const { view, progress } = await step(batchId);
        seen.push({ limit: view.limit, in_flight: progress.in_flight });
        return view.requeue_epoch >= 1 && progress.in_flight <= view.limit!
          ? { view, progress }
          : undefined;
      },
      20_000,
    );
    expect(Math.min(...seen.map((s) => s.limit ?? 6))).toBeLessThan(6);
    expect(overloaded.progress.in_flight).toBeLessThan(6);
    expect(overloaded.view.replicas[0]).toMatchObject({ url: `${sim}/metrics` });
    const requeued = (await batchRollouts(batchId)).filter((r) => r.status === "cancelled");
    expect(requeued.length).toBeGreaterThan(0);
    // Superseded by the slot's next run: listed, never the slot's outcome.
    expect(requeued.every((r) => r.superseded)).toBe(true);
    // Each run's own session publishes it superseded (nothing else tells the feed), so whatever
    // arrives first the feed never holds it: its group of one waits for the re-run, not withheld cut.
    const views = await Promise.all(requeued.map((r) => getRollout(r.rollout_id)));
    expect(views.map((v) => [v.status, v.superseded])).toEqual(
      views.map(() => ["cancelled", true]),
    );
    const feed = objects(env).feed();
    const ids = views.map((v) => ({ rollout_id: v.rollout_id, uid: v.group!.uid }));
    await waitFor("the requeued runs' own results to reach the feed", async () =>
      (await feed.holdsMany(ids)).every(Boolean) ? true : undefined,
    );
    expect(await feed.droppedGroups(batchId)).toEqual([]);

    abort.abort();
    await calls;
    const recovered = await waitFor(
      "the budget to grow back and the requeued slots to run again",
      async () => {
        const { view, progress } = await step(batchId);
        return progress.in_flight === 6 ? { view, progress } : undefined;
      },
      20_000,
    );
    expect(recovered.view.limit).toBe(6);
    const rollouts = await batchRollouts(batchId);
    const reruns = rollouts.filter((r) => r.rollout_id.endsWith(".retry-1"));
    expect(reruns.length).toBeGreaterThan(0);
    expect(reruns.every((r) => r.status === "queued" || r.status === "running")).toBe(true);
    expect(recovered.progress.counts).toMatchObject({ failed: 0 });
    // Its rollouts wait for runners that never come: cancelled, so nothing is left running.
    expect((await api(`/v1/batches/${batchId}/cancel`, { method: "POST" })).status).toBe(200);
  }, 60_000);

  // After the batch above, never before it: a batch registers with the policy object when it asks
  // (control on or off) and counts towards the budget's ceiling for 15 s (BATCH_IDLE_MS), so one
  // asked just before would raise the ceiling and move the limits asserted there.
  it("asks the policy object again only once a minute while control is off", async () => {
    await putPressure({ enabled: false });
    const batchId = uniqueId("pressure-off");
    const rows = [{ prompt: "Off row.", reward_model: { ground_truth: null } }];
    expect((await postBatch({ batch_id: batchId, agent: "external", rows, n: 1 })).status).toBe(
      202,
    );
    const asked = async () => (await policyObject().requestCounts()).by_method.pressureShare ?? 0;
    await runDurableObjectAlarm(tracker(batchId)); // hears "off"
    const before = await asked();
    await runDurableObjectAlarm(tracker(batchId));
    await runDurableObjectAlarm(tracker(batchId));
    expect(await asked()).toBe(before);
    expect((await api(`/v1/batches/${batchId}/cancel`, { method: "POST" })).status).toBe(200);
  });
});
