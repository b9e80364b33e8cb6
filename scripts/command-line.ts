/** @module Flag parsing for our scripts (`npm start`, the benches, the simulator) with `--help` and usage errors. */
import { parseArgs } from "node:util";

/** One flag: `parseArgs`'s option plus a line of help. */
export type FlagSpec =
  | { type: "string"; default?: string; short?: string; help: string; placeholder?: string }
  | { type: "boolean"; default?: boolean; short?: string; help: string };

/** A script's command line: how it is invoked, what it does, its flags. */
export interface CommandLineSpec<F extends Record<string, FlagSpec>> {
  /** How a user runs it, e.g. `npm start -- [options]`. */
  usage: string;
  /** One or two sentences on what it does. */
  description: string;
  flags: F;
  /** Extra text after the flags (examples, environment). */
  epilogue?: string;
}

type Values<F extends Record<string, FlagSpec>> = {
  [K in keyof F]: F[K] extends { type: "boolean" }
    ? boolean
    : F[K] extends { default: string }
      ? string
      : string | undefined;
};

/** The usage text: invocation, description, one line per flag with its default. */
export function formatUsage<F extends Record<string, FlagSpec>>(spec: CommandLineSpec<F>): string {
  const rows = Object.entries(spec.flags).map(([name, flag]) => {
    const short = flag.short ? `-${flag.short}, ` : "";
    const arg = flag.type === "string" ? ` <${flag.placeholder ?? "value"}>` : "";
    const fallback =
      flag.type === "string" && flag.default !== undefined ? ` (default ${flag.default})` : "";
    return [`  ${short}--${name}${arg}`, `${flag.help}${fallback}`] as const;
  });
  rows.push(["  -h, --help", "print this help and exit"]);
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  const lines = [
    `Usage: ${spec.usage}`,
    "",
    spec.description,
    "",
    "Options:",
    ...rows.map(([left, right]) => left.padEnd(width) + right),
  ];
  if (spec.epilogue) lines.push("", spec.epilogue);
  return lines.join("\n");
}

/** What `parseCommandLine` decided: run with these values, or exit with this code after printing. */
export type ParsedCommandLine<F extends Record<string, FlagSpec>> =
  | { ok: true; values: Values<F> }
  | { ok: false; exitCode: 0 | 2; stdout?: string; stderr?: string };

/**
 * Parses `args` strictly: `--help`/`-h` gives the usage (exit 0); an unknown flag, a missing value
 * or a positional argument gives the problem and the usage on stderr (exit 2), never a stack trace.
 */
export function parseCommandLine<F extends Record<string, FlagSpec>>(
  spec: CommandLineSpec<F>,
  args: string[],
): ParsedCommandLine<F> {
  const options = Object.fromEntries(
    Object.entries(spec.flags).map(([name, { help: _help, ...flag }]) => {
      const { placeholder: _placeholder, ...option } = flag as FlagSpec & { placeholder?: string };
      return [name, option];
    }),
  );
  try {
    const { values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: { ...options, help: { type: "boolean", short: "h" } },
    });
    if (values.help) return { ok: false, exitCode: 0, stdout: formatUsage(spec) };
    return { ok: true, values: values as Values<F> };
  } catch (error) {
    const message =
      error instanceof Error
        ? error.message.replace(/\. To specify a positional argument.*$/s, "")
        : String(error);
    return { ok: false, exitCode: 2, stderr: `${message}\n\n${formatUsage(spec)}` };
  }
}

/**
 * `parseCommandLine` on `process.argv`, printing and exiting when it does not return values.
 *
 * @example
 * const values = commandLine({ usage: "npm run bench:loop -- [options]", description: "…", flags: { rollouts: { type: "string", default: "30", help: "rollouts" } } });
 */
export function commandLine<F extends Record<string, FlagSpec>>(
  spec: CommandLineSpec<F>,
  args = process.argv.slice(2),
): Values<F> {
  const parsed = parseCommandLine(spec, args);
  if (parsed.ok) return parsed.values;
  if (parsed.stdout) process.stdout.write(`${parsed.stdout}\n`);
  if (parsed.stderr) process.stderr.write(`${parsed.stderr}\n`);
  process.exit(parsed.exitCode);
}

/** A flag's value as an integer in `min..max`, or the usage error (exit 2) naming the flag. */
export function integerFlag(
  flag: string,
  raw: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
  usage = "--help",
): number {
  const value = Number(raw);
  if (raw.trim() !== "" && Number.isInteger(value) && value >= min && value <= max) return value;
  process.stderr.write(
    `${flag} must be an integer ${min}..${max === Number.MAX_SAFE_INTEGER ? "" : max}, got "${raw}" (${usage})\n`,
  );
  process.exit(2);
}
