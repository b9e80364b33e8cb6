import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AttemptWatchdog } from "../../../../src/runtime/engines/attempt-watchdog";

describe("AttemptWatchdog", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  const watchdog = (options: { idleMs?: number; deadlineIn?: number; held?: boolean } = {}) => {
    const renewals: number[] = [];
    const dog = new AttemptWatchdog({
      idleMs: options.idleMs ?? 400,
      deadline: Date.now() + (options.deadlineIn ?? 60_000),
      now: () => Date.now(),
      renewEveryMs: 200,
      renewLease: async () => (renewals.push(Date.now()), options.held ?? true),
    });
    return { dog, renewals };
  };

  it("gives an attempt up after idleMs without a sign of life", async () => {
    const { dog } = watchdog();
    await vi.advanceTimersByTimeAsync(300);
    dog.touch();
    await vi.advanceTimersByTimeAsync(300);
    expect(dog.aborted).toBeNull();
    await vi.advanceTimersByTimeAsync(200);
    expect(dog.aborted).toMatchObject({ kind: "unresponsive" });
    expect(dog.signal.aborted).toBe(true);
  });

  it("does not count time spent waiting out a weight sync", async () => {
    const { dog } = watchdog();
    dog.pause(true);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(dog.aborted).toBeNull();
    dog.pause(false);
    await vi.advanceTimersByTimeAsync(500);
    expect(dog.aborted).toMatchObject({ kind: "unresponsive" });
  });

  it("gives up at the rollout's deadline, even while paused", async () => {
    const { dog } = watchdog({ deadlineIn: 250 });
    dog.pause(true);
    await vi.advanceTimersByTimeAsync(400);
    expect(dog.aborted).toMatchObject({ kind: "deadline" });
  });

  it("renews the lease while the attempt lives, and gives up once the lease is gone", async () => {
    // With a 10 s idle limit the watchdog ticks every second.
    const held = watchdog({ idleMs: 10_000 });
    await vi.advanceTimersByTimeAsync(3_500);
    expect(held.renewals.length).toBeGreaterThanOrEqual(3);
    expect(held.dog.aborted).toBeNull();
    held.dog.dispose();
    const lost = watchdog({ idleMs: 10_000, held: false });
    await vi.advanceTimersByTimeAsync(1_500);
    expect(lost.dog.aborted).toMatchObject({ kind: "lost_lease" });
  });
});
