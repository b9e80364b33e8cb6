import { describe, expect, it } from "vitest";
import { findShellTool } from "../../../tools/simulator/shell-tool";
import { CLAUDE_BASH, CODEX_SHELL, OPENCODE_BASH, READ_TOOL } from "./harness-task-dir";

const SCRIPT = "#!/bin/bash\necho 42 > answer.txt\n";

describe("shell tool detection", () => {
  it("passes the script as Claude Code's command string, leaving optional fields out", () => {
    const shell = findShellTool([READ_TOOL, CLAUDE_BASH]);
    expect(shell?.name).toBe("Bash");
    expect(shell?.argumentsFor(SCRIPT)).toEqual({ command: SCRIPT });
  });

  it("fills opencode's required description with a short text", () => {
    const shell = findShellTool([OPENCODE_BASH]);
    expect(shell?.argumentsFor(SCRIPT)).toEqual({
      command: SCRIPT,
      description: "Run the solution",
    });
  });

  it("runs the script through bash -lc when the command is an argv list (Codex's shell)", () => {
    const shell = findShellTool([CODEX_SHELL]);
    expect(shell?.argumentsFor(SCRIPT)).toEqual({ command: ["bash", "-lc", SCRIPT] });
  });

  it("uses a cmd string and gives other required parameters sensible values", () => {
    const shell = findShellTool([
      {
        function: {
          name: "exec_command",
          parameters: {
            type: "object",
            properties: {
              cmd: { type: "string" },
              workdir: { type: "string" },
              timeout_ms: { type: "integer" },
              login: { type: "boolean" },
              shell: { type: "string", enum: ["bash", "zsh"] },
            },
            required: ["cmd", "workdir", "timeout_ms", "login", "shell"],
          },
        },
      },
    ]);
    expect(shell?.argumentsFor("ls")).toEqual({
      cmd: "ls",
      workdir: ".",
      timeout_ms: 120_000,
      login: false,
      shell: "bash",
    });
  });

  it("finds no shell among tools of other names or without a command parameter", () => {
    expect(findShellTool([READ_TOOL])).toBeUndefined();
    expect(findShellTool([{ function: { name: "bash_run", parameters: {} } }])).toBeUndefined();
    expect(
      findShellTool([{ function: { name: "shell", parameters: { properties: { x: {} } } } }]),
    ).toBeUndefined();
  });
});
