import { describe, expect, it } from "vitest";
import { appIdOfKey, hashAppKey, newAppId, newAppKey, onlinePlacement } from "../../../src/online";

describe("application keys and session placement (unit)", () => {
  it("names its application in the key and stores a hash that differs from key to key", async () => {
    const appId = newAppId();
    const [a, b] = [newAppKey(appId), newAppKey(appId)];
    expect(appIdOfKey(a)).toBe(appId);
    expect(a).not.toBe(b);
    expect(await hashAppKey(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(await hashAppKey(a)).not.toBe(await hashAppKey(b));
    expect(appIdOfKey(`${a}x`)).toBeNull();
    expect(appIdOfKey("Bearer nonsense")).toBeNull();
  });

  it("groups sessions of a prompt key in arrival order, and a session without one alone", () => {
    const app = "app-0123456789ab";
    const at = (ordinal: number) =>
      onlinePlacement(app, `s${ordinal}`, { key: "q1", ordinal, groupSize: 4 });
    expect([0, 3, 4].map((n) => at(n))).toEqual([
      { uid: `online:${app}:p:q1:0`, sample_index: 0, group_size: 4 },
      { uid: `online:${app}:p:q1:0`, sample_index: 3, group_size: 4 },
      { uid: `online:${app}:p:q1:1`, sample_index: 0, group_size: 4 },
    ]);
    expect(onlinePlacement(app, "s9", null)).toEqual({
      uid: `online:${app}:s9`,
      sample_index: 0,
      group_size: 1,
    });
  });
});
