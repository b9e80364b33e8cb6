import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../../scripts/command-line";

const spec = {
  usage: "npm start -- [options]",
  description: "Runs the demo.",
  flags: {
    once: { type: "boolean" as const, default: false, help: "exit after the summary" },
    port: { type: "string" as const, default: "8787", placeholder: "port", help: "Worker port" },
  },
};

describe("parseCommandLine", () => {
  it("returns the values, with defaults, for known flags", () => {
    expect(parseCommandLine(spec, ["--once", "--port", "9000"])).toEqual({
      ok: true,
      values: { once: true, port: "9000" },
    });
    expect(parseCommandLine(spec, [])).toEqual({ ok: true, values: { once: false, port: "8787" } });
  });

  it("answers --help and -h with the usage on stdout and exit 0", () => {
    for (const flag of ["--help", "-h"]) {
      const parsed = parseCommandLine(spec, [flag]);
      expect(parsed).toMatchObject({ ok: false, exitCode: 0 });
      expect(!parsed.ok && parsed.stdout).toMatch(
        /^Usage: npm start -- \[options\]\n\nRuns the demo\.[\s\S]*--port <port> +Worker port \(default 8787\)/,
      );
    }
  });

  it("answers an unknown flag, a missing value or a stray argument with the problem and the usage on stderr, exit 2", () => {
    for (const args of [["--bogus"], ["--port"], ["extra"]]) {
      const parsed = parseCommandLine(spec, args);
      expect(parsed).toMatchObject({ ok: false, exitCode: 2 });
      expect(!parsed.ok && parsed.stderr).toContain("Usage: npm start -- [options]");
    }
    const unknown = parseCommandLine(spec, ["--bogus"]);
    expect(!unknown.ok && unknown.stderr).toMatch(/^Unknown option '--bogus'\n/);
  });
});
