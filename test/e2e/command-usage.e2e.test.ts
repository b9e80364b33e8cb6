import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

/** Runs a command the way the docs tell a user to, from the repository root. */
function run(
  command: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      command,
      args,
      { cwd: root, timeout: 60_000, env: { ...process.env, npm_config_loglevel: "silent" } },
      (error, stdout, stderr) => {
        done({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Every command of ours, as README.md and docs/ invoke it, and the first line of its usage. */
const COMMANDS: { name: string; command: string; args: string[]; usage: RegExp }[] = [
  {
    name: "npm start",
    command: "npm",
    args: ["start", "--"],
    usage: /Usage: npm start -- \[options\]/,
  },
  {
    name: "npm run simulator",
    command: "npm",
    args: ["run", "simulator", "--"],
    usage: /Usage: npm run simulator -- \[options\]/,
  },
  {
    name: "npm run bench:loop",
    command: "npm",
    args: ["run", "bench:loop", "--"],
    usage: /Usage: npm run bench:loop -- \[options\]/,
  },
  {
    name: "npm run bench:gateway",
    command: "npm",
    args: ["run", "bench:gateway", "--"],
    usage: /Usage: npm run bench:gateway -- \[options\]/,
  },
  {
    name: "npm run bench:drain",
    command: "npm",
    args: ["run", "bench:drain", "--"],
    usage: /Usage: npm run bench:drain -- \[options\]/,
  },
  {
    name: "npx edge-rollout",
    command: "npx",
    args: ["edge-rollout"],
    usage: /Usage: edge-rollout \[options\] \[command\]/,
  },
  {
    name: "npx edge-rollout dev",
    command: "npx",
    args: ["edge-rollout", "dev"],
    usage: /Usage: edge-rollout dev \[options\]/,
  },
  {
    name: "examples/verl/one_step.py",
    command: "python3",
    args: ["examples/verl/one_step.py"],
    usage: /usage: one_step\.py/,
  },
];

describe("--help and unknown flags on every command of ours (end to end)", () => {
  it.each(COMMANDS)(
    "$name --help prints its usage and exits 0",
    async ({ command, args, usage }) => {
      const result = await run(command, [...args, "--help"]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(usage);
      expect(result.stdout).toContain("--help");
    },
  );

  it.each(COMMANDS)(
    "$name --no-such-flag names the flag, prints the usage on stderr and exits 2, without a stack trace",
    async ({ command, args, usage }) => {
      const result = await run(command, [...args, "--no-such-flag"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("--no-such-flag");
      expect(result.stderr + result.stdout).toMatch(new RegExp(usage.source, "i"));
      expect(result.stderr).not.toMatch(/^\s+at /m);
    },
  );
});
