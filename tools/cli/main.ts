/** @module The entry of `edge-rollout`: parse, run one command, turn the outcome into an exit code. */
import { readFileSync } from "node:fs";
import { CommanderError } from "commander";
import { CliError, ExitCode, UsageError } from "./errors";
import { Output, type Writable } from "./output";
import { buildProgram } from "./program";

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version?: string;
  };
  return pkg.version ?? "0.0.0";
}

/** Commander's own exits: help and version are success; every other parse problem is a usage error. */
function commanderExit(error: CommanderError): number {
  if (error.code === "commander.helpDisplayed" || error.code === "commander.version")
    return ExitCode.ok;
  return ExitCode.usage;
}

/**
 * Runs `edge-rollout <argv>` and resolves with the exit code (see HELP_FOOTER). Never throws:
 * failures are reported on `stderr` (or as `{ok: false, error}` on stdout with --json).
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2));
 */
export async function main(
  argv: string[],
  io: { stdout?: Writable; stderr?: Writable } = {},
): Promise<number> {
  const out = new Output(
    argv.includes("--json"),
    io.stdout ?? process.stdout,
    io.stderr ?? process.stderr,
  );
  const state = { exitCode: 0 };
  try {
    await buildProgram(out, state, packageVersion()).parseAsync(argv, { from: "user" });
    return state.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      const code = commanderExit(error);
      // Commander already printed the message in text mode; scripts get it as JSON.
      if (code !== ExitCode.ok && out.json)
        out.error(new UsageError(error.message.replace(/^error: /, "")));
      return code;
    }
    out.error(error);
    return error instanceof CliError ? error.exitCode : ExitCode.failure;
  }
}
