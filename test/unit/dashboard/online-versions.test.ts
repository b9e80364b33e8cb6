import { describe, expect, it } from "vitest";
import { versionRows, Z_95 } from "../../../functions/views/online-version-rows";
import type { OnlineSessionView, ServingConfig } from "../../../src/schemas/online";

const backend = { name: "vllm", replicas: ["http://127.0.0.1:1/v1"] } as const;
const serving = {
  versions: { "3": { backend, model: null }, "4": { backend, model: null } },
  weights: { "3": 3, "4": 1 },
  generation: 2,
} as unknown as ServingConfig;

let n = 0;
function session(
  version: number,
  status: OnlineSessionView["status"],
  reward: number | null,
  events = 1,
): OnlineSessionView {
  n += 1;
  return {
    session_id: `s${n}`,
    rollout_id: `online:app-000000000000:s${n}`,
    version,
    prompt_key: null,
    status,
    created_at: n,
    closes_at: n + 1,
    expires_at: n + 2,
    feedback: Array.from({ length: events }, (_, i) => ({
      reward: reward ?? 0,
      label: null,
      source: `src${i}`,
      at: n,
    })),
    reward,
  };
}

describe("versionRows (unit)", () => {
  it("counts sessions, states and feedback events per version, and the scored sessions' mean with a 95% interval", () => {
    const rewards = [1, 0, 1, 1];
    const sessions = [
      ...rewards.map((r) => session(3, "scored", r)),
      session(3, "open", null, 2),
      session(3, "withheld", null, 0),
      session(2, "scored", 0.5),
    ];
    const rows = versionRows(sessions, serving);
    expect(rows.map((r) => r.version)).toEqual(["2", "3", "4"]);
    const [two, three, four] = rows;

    const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
    const variance = rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (rewards.length - 1);
    const half = Z_95 * Math.sqrt(variance / rewards.length);
    expect(three).toMatchObject({ share: 0.75, sessions: 6, open: 1, scored: 4, withheld: 1 });
    expect(three!.feedback).toBe(4 + 2 + 0);
    expect(three!.reward.mean).toBeCloseTo(mean, 12);
    expect(three!.reward.ci![0]).toBeCloseTo(mean - half, 12);
    expect(three!.reward.ci![1]).toBeCloseTo(mean + half, 12);

    // A version no longer served keeps its sessions' row, outside the split.
    expect(two).toMatchObject({ share: null, sessions: 1, scored: 1 });
    expect(two!.reward.mean).toBe(0.5);
    // A served version without sessions: its share, no mean.
    expect(four).toMatchObject({ share: 0.25, sessions: 0, feedback: 0 });
    expect(four!.reward).toMatchObject({ mean: null, ci: null });
  });
});
