import { describe, expect, it } from "vitest";
import {
  installRolloutConsole,
  runWithRolloutConsole,
} from "../../../../src/runtime/driver/rollout-console";

/** A console whose methods record what reaches them (after the rollout prefix is added). */
function recordingConsole(): { target: Console; lines: string[] } {
  const lines: string[] = [];
  const record = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  return {
    target: {
      log: record,
      info: record,
      warn: record,
      error: record,
      debug: record,
    } as unknown as Console,
    lines,
  };
}

describe("rollout console", () => {
  it("prefixes every line an agent logs with its own rollout id, also across awaits of concurrent rollouts", async () => {
    const { target, lines } = recordingConsole();
    const agent = (id: string) =>
      runWithRolloutConsole(
        id,
        async () => {
          target.log("step", 1, { ok: true });
          await new Promise((r) => setTimeout(r, 5));
          target.error("two\nlines");
        },
        target,
      );
    await Promise.all([agent("a:0:0"), agent("b:0:1")]);
    expect(lines.filter((line) => line.startsWith("[rollout a:0:0] "))).toEqual([
      "[rollout a:0:0] step 1 { ok: true }",
      "[rollout a:0:0] two\n[rollout a:0:0] lines",
    ]);
    expect(lines.filter((line) => line.startsWith("[rollout b:0:1] "))).toHaveLength(2);
  });

  it("leaves console calls outside a rollout unchanged, and wraps a console once", () => {
    const { target, lines } = recordingConsole();
    installRolloutConsole(target);
    installRolloutConsole(target);
    target.log("plain", 2);
    runWithRolloutConsole("r1", () => target.warn("inside"), target);
    expect(lines).toEqual(["plain 2", "[rollout r1] inside"]);
  });
});
