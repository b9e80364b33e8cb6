import { describe, expect, it } from "vitest";
import { startVllmSimulator } from "../../../tools/simulator";
import { USAGE, parseCliOptions, simulatorArgs } from "../../../tools/simulator/cli-options";
import { resolveOptions } from "../../../tools/simulator/options";
import { writeTaskDir } from "./harness-task-dir";

describe("the harness options", () => {
  it("round-trips --harness-tasks and --harness-success-rate, documented in --help", () => {
    const options = { harnessTasks: "/data/tasks", harnessSuccessRate: 0.4 };
    expect(simulatorArgs(options)).toEqual([
      "--harness-tasks",
      "/data/tasks",
      "--harness-success-rate",
      "0.4",
    ]);
    expect(parseCliOptions(simulatorArgs(options))).toMatchObject(options);
    expect(USAGE).toContain("--harness-tasks <dir>");
    expect(USAGE).toContain("--harness-success-rate <p>");
  });

  it("defaults to no tasks and a 0.7 success rate, and refuses a rate outside 0..1", () => {
    const config = resolveOptions({});
    expect(config.harnessTasks).toBeNull();
    expect(config.harnessSuccessRate).toBe(0.7);
    expect(() => resolveOptions({ harnessSuccessRate: 1.5 })).toThrow(
      /harnessSuccessRate: rates must be within 0\.\.1/,
    );
  });

  it("fails to start, or to reconfigure, with a directory that holds no tasks", async () => {
    await expect(startVllmSimulator({ port: 0, harnessTasks: "/nonexistent" })).rejects.toThrow(
      /\/nonexistent is not a directory/,
    );
    const sim = await startVllmSimulator({ port: 0, harnessTasks: writeTaskDir() });
    try {
      expect(() => sim.configure({ harnessTasks: "/nonexistent" })).toThrow(/not a directory/);
      sim.configure({ harnessSuccessRate: 1 });
    } finally {
      await sim.close();
    }
  });
});
