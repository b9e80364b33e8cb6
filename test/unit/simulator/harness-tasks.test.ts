import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findHarnessTask, loadHarnessTasks } from "../../../tools/simulator/harness-tasks";
import { writeTaskDir } from "./harness-task-dir";

const SHIPPED = join(import.meta.dirname, "../../../examples/harness-tasks");

describe("harness tasks", () => {
  it("loads every task directory in Harbor's layout, skipping what is not a task", () => {
    const tasks = loadHarnessTasks(writeTaskDir());
    expect(tasks.map((task) => task.id)).toEqual(["fix-config", "make-answer"]);
    const answer = tasks[1]!;
    expect(answer.instruction).toBe("Create a file answer.txt containing the number 42.");
    expect(answer.solution).toBe("#!/bin/bash\necho 42 > answer.txt\n");
    expect(answer.wrong).toBe("#!/bin/bash\necho 41 > answer.txt\n");
    expect(tasks[0]!.wrong).toBeNull();
  });

  it("refuses a directory that is missing, empty of tasks, or has a task without solve.sh", () => {
    expect(() => loadHarnessTasks("/nonexistent/tasks")).toThrow(/is not a directory/);
    const empty = mkdtempSync(join(tmpdir(), "harness-empty-"));
    expect(() => loadHarnessTasks(empty)).toThrow(/holds no task/);
    mkdirSync(join(empty, "no-oracle"));
    writeFileSync(join(empty, "no-oracle", "instruction.md"), "Do something.");
    expect(() => loadHarnessTasks(empty)).toThrow(/no-oracle has no solution/);
  });

  it("finds the task whose instruction a wrapped, re-spaced user turn contains", () => {
    const tasks = loadHarnessTasks(writeTaskDir());
    const found = findHarnessTask(tasks, [
      { role: "system", content: "You are a coding agent." },
      {
        role: "user",
        content:
          '<system-reminder>Be careful.</system-reminder>\nIn config.json,\nset "debug" to false.',
      },
      { role: "assistant", content: "" },
      { role: "tool", content: "ok" },
      { role: "user", content: "<system-reminder>todo list is empty</system-reminder>" },
    ]);
    expect(found?.task.id).toBe("fix-config");
    expect(found?.turnIndex).toBe(1);
  });

  it("finds nothing when no user turn carries an instruction", () => {
    const tasks = loadHarnessTasks(writeTaskDir());
    const turns = [
      { role: "system" as const, content: "Create a file answer.txt containing the number 42." },
      { role: "user" as const, content: "Create a file answer.txt" },
    ];
    expect(findHarnessTask(tasks, turns)).toBeUndefined();
  });

  it("prefers the longest instruction when one contains another", () => {
    const dir = writeTaskDir({
      short: { instruction: "Print hello.", solve: "echo hello" },
      long: { instruction: "Print hello. Then print bye.", solve: "echo hello; echo bye" },
    });
    const found = findHarnessTask(loadHarnessTasks(dir), [
      { role: "user", content: "Print hello. Then print bye." },
    ]);
    expect(found?.task.id).toBe("long");
  });

  it.skipIf(!existsSync(SHIPPED))("loads the tasks shipped in examples/harness-tasks", () => {
    const tasks = loadHarnessTasks(SHIPPED);
    expect(tasks.length).toBeGreaterThanOrEqual(10);
    for (const task of tasks) {
      expect(task.solution.trim()).not.toBe("");
      const turns = [{ role: "user" as const, content: `Task:\n${task.instruction}\n` }];
      expect(findHarnessTask(tasks, turns)?.task.id).toBe(task.id);
    }
  });
});
