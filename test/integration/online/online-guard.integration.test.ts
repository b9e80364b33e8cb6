/**
 * Integration: the split guard (off by default) takes a candidate out of the split once its
 * sessions' feedback is worse than the stable version's with confidence, and logs the action.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../../fixtures/rollouts";
import { expectProblem } from "../fixtures/feed-fixtures";
import { chat, createApp, readSession, send, serveVersions } from "./online-fixtures";

interface GuardView {
  config: { enabled: boolean };
  rewards: Array<{ version: string; sessions: number; mean: number | null }>;
  log: Array<{ action: string; version: string; weights_after: Record<string, number> }>;
}

describe("the split guard (integration)", () => {
  it("is off by default and names a stable version that is not served (422)", async () => {
    await serveVersions({ "3": 1 });
    const guard = (await (await send("GET", "/v1/online/guard")).json()) as GuardView;
    expect(guard.config.enabled).toBe(false);
    const problem = await expectProblem(
      await send("PUT", "/v1/online/guard", { enabled: true, stable: "9" }),
      422,
    );
    expect(problem.errors?.map((e) => e.path)).toEqual(["stable"]);
  });

  it("takes out a candidate whose feedback is worse than the stable version's, and logs it", async () => {
    await serveVersions({ "3": 50, "4": 50 });
    await send("PUT", "/v1/online/guard", { enabled: true, stable: "3", min_sessions: 2 });
    try {
      const { api_key } = await createApp({ feedback_window_ms: 400, retention_ms: 60_000 });
      // The guard acts once each version has min_sessions (2) scored sessions: ask until both do.
      const perVersion = new Map<number, number>();
      const enough = () => [3, 4].every((v) => (perVersion.get(v) ?? 0) >= 2);
      for (let i = 0; !enough() || i < 8; i++) {
        const id = `guard-${crypto.randomUUID().slice(0, 8)}`;
        await chat(api_key, id);
        const { version } = await readSession(api_key, id);
        perVersion.set(version, (perVersion.get(version) ?? 0) + 1);
        // The candidate's users are unhappy, the stable version's happy.
        await send(
          "POST",
          `/v1/online/sessions/${id}/feedback`,
          { reward: version === 3 ? 1 : 0 },
          api_key,
        );
        if (i > 40) throw new Error("40 sessions never gave both versions two each");
      }
      const guard = await waitFor("the guard's action", async () => {
        const view = (await (await send("GET", "/v1/online/guard")).json()) as GuardView;
        return view.log.length > 0 ? view : undefined;
      });
      expect(guard.log[0]).toMatchObject({
        action: "remove",
        version: "4",
        weights_after: { "3": 50, "4": 0 },
      });
      const serving = (await (await send("GET", "/v1/online/serving")).json()) as {
        weights: Record<string, number>;
      };
      expect(serving.weights).toEqual({ "3": 50, "4": 0 });
    } finally {
      await send("PUT", "/v1/online/guard", { enabled: false });
    }
  });
});
