/** @module Where a command's output goes: text for people, or one JSON document for scripts. */
import { CliError } from "./errors";

/** Something text can be written to (process.stdout, a test buffer). */
export interface Writable {
  write(text: string): unknown;
  isTTY?: boolean;
}

/**
 * A command's output. In human mode results go to stdout and notes/progress to stderr; with
 * `--json` stdout holds exactly one JSON document (the result, or `{ok: false, error}`) and notes
 * are not printed, so `edge-rollout … --json | jq` always parses.
 */
export class Output {
  readonly json: boolean;
  readonly stdout: Writable;
  readonly stderr: Writable;

  constructor(json: boolean, stdout: Writable = process.stdout, stderr: Writable = process.stderr) {
    this.json = json;
    this.stdout = stdout;
    this.stderr = stderr;
  }

  /** True when progress may redraw in place (stderr is a terminal and the output is not JSON). */
  get interactive(): boolean {
    return !this.json && Boolean(this.stderr.isTTY);
  }

  /** A note for people (stderr); silent with --json. */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${text}\n`);
  }

  /** The command's result: `human()` as text, or `data` as the JSON document. */
  result(data: unknown, human: () => string): void {
    if (this.json) this.stdout.write(`${JSON.stringify(data)}\n`);
    else {
      const text = human();
      if (text !== "") this.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
    }
  }

  /** Reports a failure: `{ok: false, error}` on stdout with --json, else the message and hint on stderr. */
  error(error: unknown): void {
    const cli = error instanceof CliError ? error : null;
    const message = error instanceof Error ? error.message : String(error);
    if (this.json) {
      const body = {
        ok: false,
        error: {
          kind: cli?.name ?? "Error",
          message,
          exit_code: cli?.exitCode ?? 1,
          ...(cli?.details === undefined ? {} : { details: cli.details }),
          ...(cli?.hint ? { hint: cli.hint } : {}),
        },
      };
      this.stdout.write(`${JSON.stringify(body)}\n`);
      return;
    }
    this.stderr.write(`error: ${message}\n`);
    for (const line of detailLines(cli?.details)) this.stderr.write(`  ${line}\n`);
    if (cli?.hint) this.stderr.write(`hint: ${cli.hint}\n`);
  }
}

/** Field problems (`[{path, message}]`) as lines; anything else is not listed. */
function detailLines(details: unknown): string[] {
  if (!Array.isArray(details)) return [];
  return details
    .slice(0, 20)
    .map((item: { path?: unknown; message?: unknown }) =>
      item.path
        ? `${String(item.path)}: ${String(item.message)}`
        : String(item.message ?? JSON.stringify(item)),
    );
}
