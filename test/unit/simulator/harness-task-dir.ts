/** Shared helpers for the harness tests: a temporary Harbor task directory and the harnesses' shell tools. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One task to write: its instruction, oracle and optional wrong attempt. */
export interface TaskFiles {
  instruction: string;
  solve: string;
  wrong?: string;
}

/** Two tasks, one with a wrong attempt and one without. */
export const TASKS: Record<string, TaskFiles> = {
  "make-answer": {
    instruction: "Create a file answer.txt containing the number 42.\n",
    solve: "#!/bin/bash\necho 42 > answer.txt\n",
    wrong: "#!/bin/bash\necho 41 > answer.txt\n",
  },
  "fix-config": {
    instruction: 'In config.json, set  "debug" to false.\n',
    solve: '#!/bin/bash\nsed -i \'s/"debug": true/"debug": false/\' config.json\n',
  },
};

/** Writes `tasks` (plus a stray file and a non-task folder) in Harbor's layout under a new temp dir. */
export function writeTaskDir(tasks: Record<string, TaskFiles> = TASKS): string {
  const dir = mkdtempSync(join(tmpdir(), "harness-tasks-"));
  for (const [id, files] of Object.entries(tasks)) {
    mkdirSync(join(dir, id, "solution"), { recursive: true });
    writeFileSync(join(dir, id, "instruction.md"), files.instruction);
    writeFileSync(join(dir, id, "solution", "solve.sh"), files.solve);
    if (files.wrong !== undefined)
      writeFileSync(join(dir, id, "solution", "wrong.sh"), files.wrong);
  }
  writeFileSync(join(dir, "dataset.txt"), Object.keys(tasks).join("\n"));
  mkdirSync(join(dir, "shared-assets"));
  return dir;
}

/** Claude Code's shell tool (2.1.x): command string, optional description, timeout and background flag. */
export const CLAUDE_BASH = {
  type: "function",
  function: {
    name: "Bash",
    description: "Executes a given bash command.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string" },
        timeout: { type: "number" },
        description: { type: "string" },
        run_in_background: { type: "boolean" },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
} as const;

/** A bash tool that requires a `description` string beside the command (opencode's 1.18.33 does not). */
export const OPENCODE_BASH = {
  type: "function",
  function: {
    name: "bash",
    description: "Run a shell command.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string" },
        timeout: { type: "number" },
        description: { type: "string" },
      },
      required: ["command", "description"],
    },
  },
} as const;

/** Codex's classic shell tool: the command as an argv list. */
export const CODEX_SHELL = {
  type: "function",
  function: {
    name: "shell",
    description: "Runs a shell command and returns its output.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "array", items: { type: "string" } },
        workdir: { type: "string" },
        timeout_ms: { type: "number" },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
} as const;

/** A tool no harness uses as its shell (a harness offers it beside the shell). */
export const READ_TOOL = {
  type: "function",
  function: {
    name: "Read",
    parameters: { type: "object", properties: { file_path: { type: "string" } } },
  },
} as const;
