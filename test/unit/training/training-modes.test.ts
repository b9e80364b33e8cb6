import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../../src/errors";
import {
  DataManagerRegistry,
  DEFAULT_ASYNC_MAX_STALENESS,
  dataManagers,
  TrainingModeRegistry,
  trainingModes,
} from "../../../src/training/training-modes";

describe("trainingModes", () => {
  it("bounds verl/hybrid to the current version and verl/one_step_off to one behind", () => {
    expect(trainingModes.get("verl/hybrid")).toMatchObject({
      name: "verl/hybrid",
      max_staleness: 0,
    });
    expect(trainingModes.get("verl/one_step_off")).toMatchObject({
      name: "verl/one_step_off",
      max_staleness: 1,
    });
  });

  it("resolves async to its default and async/<k> to k", () => {
    expect(trainingModes.get("async")?.max_staleness).toBe(DEFAULT_ASYNC_MAX_STALENESS);
    expect(trainingModes.get("async/0")?.max_staleness).toBe(0);
    expect(trainingModes.get("async/12")).toMatchObject({ name: "async/12", max_staleness: 12 });
  });

  it("does not parameterize modes that are not parametric, nor accept a malformed k", () => {
    for (const name of [
      "verl/hybrid/2",
      "verl/3",
      "async/-1",
      "async/01",
      "async/1.5",
      "async/x",
      "async/99999999",
    ])
      expect(trainingModes.get(name)).toBeUndefined();
  });

  it("names the known modes when resolving an unknown one", () => {
    expect(() => trainingModes.resolve("verl/nope")).toThrow(InvalidInputError);
    expect(() => trainingModes.resolve("verl/nope")).toThrow(
      'unknown training mode "verl/nope"; known modes: async, async/<k>, online, online/<k>, verl/hybrid, verl/one_step_off',
    );
  });

  it("accepts new modes and rejects duplicates, bad names and bad staleness", () => {
    const registry = new TrainingModeRegistry().register("verl/two_step_off", {
      max_staleness: 2,
      description: "two behind",
    });
    expect(registry.get("verl/two_step_off")?.max_staleness).toBe(2);
    expect(() =>
      registry.register("verl/two_step_off", { max_staleness: 2, description: "again" }),
    ).toThrow(/already registered/);
    expect(() => registry.register("Bad Name", { max_staleness: 0, description: "" })).toThrow(
      /must match/,
    );
    expect(() => registry.register("neg", { max_staleness: -1, description: "" })).toThrow(
      /max_staleness must be an integer/,
    );
  });
});

describe("dataManagers", () => {
  it("feeds the trainer with train and only stores with infer", () => {
    expect(dataManagers.resolve("train").feeds_trainer).toBe(true);
    expect(dataManagers.resolve("infer").feeds_trainer).toBe(false);
  });

  it("accepts new managers, rejects duplicates, and names the known ones for an unknown name", () => {
    const registry = new DataManagerRegistry().register("eval", {
      feeds_trainer: false,
      description: "held out",
    });
    expect(registry.get("eval")).toEqual({ feeds_trainer: false, description: "held out" });
    expect(() => registry.register("eval", { feeds_trainer: true, description: "" })).toThrow(
      /already registered/,
    );
    expect(registry.get("missing")).toBeUndefined();
    expect(() => registry.resolve("missing")).toThrow(
      'unknown data manager "missing"; known data managers: eval',
    );
  });
});
