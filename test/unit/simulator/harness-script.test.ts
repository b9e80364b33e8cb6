import { describe, expect, it } from "vitest";
import {
  FINAL_ANSWER,
  IDLE_COMMAND,
  harnessAnswer,
  harnessSucceeds,
} from "../../../tools/simulator/harness-script";
import type { ScriptTurn } from "../../../tools/simulator/scripted-answers";
import { CLAUDE_BASH, TASKS, writeTaskDir } from "./harness-task-dir";

const dir = writeTaskDir();
const config = { seed: 0, harnessTasks: dir, harnessSuccessRate: 0.7 };
const ask = (turns: ScriptTurn[], extra: Record<string, unknown> = {}) =>
  harnessAnswer(
    { turns, toolMode: "auto", thinking: false, tools: [CLAUDE_BASH], sampleKey: "0:0", ...extra },
    config,
  );
const instruction: ScriptTurn = { role: "user", content: TASKS["make-answer"]!.instruction };
const keys = Array.from({ length: 2000 }, (_, i) => `${i}:${i % 4}`);

describe("harness script", () => {
  it("solves a task in about harnessSuccessRate of rollouts over many sample keys", () => {
    for (const rate of [0.3, 0.7]) {
      const cfg = { seed: 5, harnessSuccessRate: rate };
      const solved = keys.filter((key) => harnessSucceeds(cfg, "make-answer", key)).length;
      expect(Math.abs(solved / keys.length - rate)).toBeLessThan(0.04);
    }
  });

  it("gives one sample key the same outcome on every call, and the task and seed matter", () => {
    const first = keys.map((key) => harnessSucceeds(config, "make-answer", key));
    expect(keys.map((key) => harnessSucceeds(config, "make-answer", key))).toEqual(first);
    expect(keys.map((key) => harnessSucceeds(config, "fix-config", key))).not.toEqual(first);
    const reseeded = { ...config, seed: 1 };
    expect(keys.map((key) => harnessSucceeds(reseeded, "make-answer", key))).not.toEqual(first);
  });

  it("runs solve.sh on the success path and wrong.sh (or ls without one) otherwise", () => {
    const key = (wanted: boolean, task: string) =>
      keys.find((k) => harnessSucceeds(config, task, k) === wanted)!;
    const command = (task: string, sampleKey: string) =>
      ask([{ role: "user", content: TASKS[task]!.instruction }], { sampleKey })!.toolCalls[0]!
        .arguments.command;
    expect(command("make-answer", key(true, "make-answer"))).toBe(TASKS["make-answer"]!.solve);
    expect(command("make-answer", key(false, "make-answer"))).toBe(TASKS["make-answer"]!.wrong);
    expect(command("fix-config", key(false, "fix-config"))).toBe(IDLE_COMMAND);
  });

  it("answers with a final text, no call, once the tool result is back", () => {
    const answer = ask([
      instruction,
      { role: "assistant", content: "" },
      { role: "tool", content: "" },
      { role: "user", content: "<system-reminder>ok</system-reminder>" },
    ]);
    expect(answer).toEqual({ content: FINAL_ANSWER, toolCalls: [] });
  });

  it("thinks first when thinking is on, and keeps a prompt's empty think block", () => {
    expect(ask([instruction], { thinking: true })!.content).toMatch(/^<think>.+<\/think>\n$/);
    const opened = "<think>\n\n</think>\n\n";
    expect(ask([instruction], { thinking: true, openTurn: opened })!.content).toBe(opened);
  });

  it("leaves requests alone without a task, a shell tool, tool use, or harnessTasks", () => {
    expect(ask([{ role: "user", content: "What is 2 + 2?" }])).toBeUndefined();
    expect(ask([instruction], { tools: [] })).toBeUndefined();
    expect(ask([instruction], { toolMode: "none" })).toBeUndefined();
    expect(ask([instruction], { toolMode: { name: "Read" } })).toBeUndefined();
    const off = { ...config, harnessTasks: null };
    expect(
      harnessAnswer({ turns: [instruction], toolMode: "auto", thinking: false }, off),
    ).toBeUndefined();
  });
});
