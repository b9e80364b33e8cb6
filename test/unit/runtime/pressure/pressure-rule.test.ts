/** Unit: the KV-pressure rule (AIMD with hysteresis), its overload requeue and the batches' shares. */
import { describe, expect, it } from "vitest";
import {
  COOLDOWN_SAMPLES,
  DECREASE_FACTOR,
  INITIAL_PRESSURE_STATE,
  nextPressureState,
  type PressureState,
  sharesOf,
} from "../../../../src/runtime/pressure";
import { PressureConfig } from "../../../../src/schemas/pressure";

const config = PressureConfig.parse({
  enabled: true,
  high_water: 0.9,
  low_water: 0.7,
  overload_samples: 3,
});

function replica(kv_usage: number, preemptions = 0, waiting = 0) {
  return [{ url: "r0", kv_usage, running: 1, waiting, preemptions }];
}

/**
 * Runs the rule over `samples` ([usage, preemptions counter]) with a ceiling of 100 and `inFlight`
 * rollouts in flight (default: as many as the last limit, the batches drained to it). The first
 * sample only learns the preemption counter.
 */
function run(
  samples: Array<[usage: number, preemptions: number]>,
  inFlight?: number,
  start: PressureState = INITIAL_PRESSURE_STATE,
) {
  const states: PressureState[] = [];
  let state = start;
  for (const [usage, preemptions] of samples) {
    state = nextPressureState(state, config, {
      replicas: replica(usage, preemptions),
      inFlight: inFlight ?? state.limit ?? 100,
      ceiling: 100,
    });
    states.push(state);
  }
  return states;
}

/** Samples preempting once each, after one that learns the counter. */
const preempting = (count: number): Array<[number, number]> =>
  Array.from({ length: count + 1 }, (_, i) => [0.95, i]);

describe("nextPressureState (unit)", () => {
  it("starts at the ceiling and cuts what is in flight by the decrease factor on a preemption", () => {
    const [learn, cut] = run(preempting(1));
    expect(learn!.limit).toBe(95); // high usage alone: one soft step down
    expect(cut).toMatchObject({ limit: Math.floor(95 * DECREASE_FACTOR), decision: "decrease" });
    // With 40 in flight: the soft step trims from 40 (to 35); the cut waits while the 40 drain.
    expect(run(preempting(1), 40).map((s) => s.limit)).toEqual([35, 35]);
  });

  it("trims a step per sample at the high-water mark without preemptions, losing no work", () => {
    const states = run([
      [0.92, 0],
      [0.93, 0],
      [0.95, 0],
    ]);
    expect(states.map((s) => s.limit)).toEqual([95, 90, 85]);
    expect(states.every((s) => s.requeue_epoch === 0)).toBe(true);
  });

  it("holds after a cut for the cooldown, then cuts again if still preempting", () => {
    const states = run(preempting(COOLDOWN_SAMPLES + 1)).slice(1);
    expect(states.map((s) => s.decision)).toEqual(["decrease", "hold", "decrease"]);
  });

  it("neither cuts nor trims again while the batches still drain to the last cut", () => {
    const cut = run(preempting(1))[1]!;
    const states = run(
      [
        [0.95, 2],
        [0.95, 2],
        [0.95, 3],
      ],
      100,
      { ...cut, cooldown: 0 },
    );
    expect(states.map((s) => [s.decision, s.limit])).toEqual([
      ["hold", cut.limit],
      ["hold", cut.limit],
      ["hold", cut.limit],
    ]);
  });

  it("reads a preemption counter that went down as a restarted server, not as preemptions", () => {
    const states = run([
      [0.5, 10],
      [0.5, 0],
    ]);
    expect(states.map((s) => s.decision)).toEqual(["hold", "hold"]);
  });

  it("holds inside the band between the water marks (hysteresis) and grows only below the low one", () => {
    const cut = { ...run(preempting(1))[1]!, cooldown: 0 };
    const states = run(
      [
        [0.8, 1],
        [0.75, 1],
        [0.71, 1],
        [0.6, 1],
      ],
      100,
      cut,
    );
    expect(states.map((s) => s.decision)).toEqual(["hold", "hold", "hold", "increase"]);
    expect(states[3]!.limit).toBe(cut.limit! + 5);
  });

  it("does not grow while the batches leave the budget unused, nor past the ceiling", () => {
    const cut = { ...run(preempting(1))[1]!, cooldown: 0 };
    expect(run([[0.1, 1]], 10, cut)[0]).toMatchObject({ decision: "hold", limit: cut.limit });
    const full = run(Array(20).fill([0.1, 1]), 100, cut).at(-1)!;
    expect(full.limit).toBe(100);
  });

  it("does not grow while requests wait in the engine's queue", () => {
    const cut = { ...run(preempting(1))[1]!, cooldown: 0 };
    const next = nextPressureState(cut, config, {
      replicas: replica(0.5, 1, 4),
      inFlight: 100,
      ceiling: 100,
    });
    expect(next).toMatchObject({ decision: "hold", limit: cut.limit });
  });

  it("asks for a requeue after overload_samples preempting samples in a row, once, and counts anew", () => {
    expect(run(preempting(6)).map((s) => s.requeue_epoch)).toEqual([0, 0, 0, 1, 1, 1, 2]);
    // A sample without a preemption breaks the run.
    const broken = run([
      [0.95, 0],
      [0.95, 1],
      [0.95, 2],
      [0.95, 2],
      [0.95, 3],
      [0.95, 4],
    ]);
    expect(broken.map((s) => s.requeue_epoch)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("changes nothing on a sample no replica answered", () => {
    const cut = run(preempting(1))[1]!;
    const blind = nextPressureState(cut, config, { replicas: [], inFlight: 100, ceiling: 100 });
    expect(blind).toMatchObject({ decision: "blind", limit: cut.limit, overload_streak: 1 });
  });

  it("never goes below min_concurrency", () => {
    const floor = PressureConfig.parse({ enabled: true, min_concurrency: 8 });
    let state = INITIAL_PRESSURE_STATE;
    for (let i = 0; i < 30; i++)
      state = nextPressureState({ ...state, cooldown: 0 }, floor, {
        replicas: replica(1, i),
        inFlight: state.limit ?? 100,
        ceiling: 100,
      });
    expect(state.limit).toBe(8);
  });

  it("reads the fullest replica: one full replica trims however empty the others", () => {
    const next = nextPressureState(INITIAL_PRESSURE_STATE, config, {
      replicas: [
        ...replica(0.1),
        { url: "r1", kv_usage: 0.97, running: 1, waiting: 0, preemptions: 0 },
      ],
      inFlight: 100,
      ceiling: 100,
    });
    expect(next).toMatchObject({ decision: "decrease", limit: 95 });
  });
});

describe("sharesOf (unit)", () => {
  it("splits the limit in proportion to each batch's max_concurrent, at least 1 and at most its own", () => {
    const shares = sharesOf(30, [
      { batch_id: "a", max_concurrent: 64 },
      { batch_id: "b", max_concurrent: 32 },
      { batch_id: "c", max_concurrent: 1 },
    ]);
    expect(Object.fromEntries(shares)).toEqual({ a: 19, b: 9, c: 1 });
    expect(sharesOf(1000, [{ batch_id: "a", max_concurrent: 64 }]).get("a")).toBe(64);
  });
});
