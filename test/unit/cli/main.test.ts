import { describe, expect, it } from "vitest";
import { main } from "../../../tools/cli/main";
import { freePort } from "../../../tools/simulator/free-port";

function buffers() {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    io: {
      stdout: { write: (t: string) => stdout.push(t) },
      stderr: { write: (t: string) => stderr.push(t) },
    },
    stdout: () => stdout.join(""),
    stderr: () => stderr.join(""),
  };
}

describe("edge-rollout's exit codes, in process (unit)", () => {
  it("exits 0 for --help and --version", async () => {
    const help = buffers();
    expect(await main(["--help"], help.io)).toBe(0);
    expect(help.stdout()).toContain("Exit codes:");
    const version = buffers();
    expect(await main(["--version"], version.io)).toBe(0);
    expect(version.stdout()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("exits 2 for a missing required flag, a bad value, an unknown flag or command, and no command", async () => {
    for (const argv of [
      ["submit", "x.jsonl", "--n", "4"],
      ["submit", "x.jsonl", "--agent", "a", "--n", "0"],
      ["status", "--bogus"],
      ["launch"],
      [],
      ["export", "r", "--format", "csv"],
    ]) {
      const out = buffers();
      expect(await main(argv, out.io), argv.join(" ")).toBe(2);
      expect(out.stderr()).toMatch(/error|Usage/);
    }
  });

  it("exits 2 for an export of neither or both a rollout and --batch, or a format that does not fit", async () => {
    const url = "http://127.0.0.1:9";
    for (const argv of [
      ["export"],
      ["export", "r", "--batch", "b", "--out", "x"],
      ["export", "--batch", "b"],
      ["export", "--batch", "b", "--format", "json", "--out", "x"],
      ["export", "r", "--format", "parquet"],
    ]) {
      const out = buffers();
      expect(await main([...argv, "--url", url], out.io), argv.join(" ")).toBe(2);
      expect(out.stderr()).toMatch(/export takes|--batch|parquet/);
    }
  });

  it("reports a usage error as one JSON document with --json", async () => {
    const out = buffers();
    expect(await main(["submit", "x.jsonl", "--agent", "a", "--n", "99", "--json"], out.io)).toBe(
      2,
    );
    const doc = JSON.parse(out.stdout()) as {
      ok: boolean;
      error: { kind: string; exit_code: number; message: string };
    };
    expect(doc).toMatchObject({ ok: false, error: { kind: "UsageError", exit_code: 2 } });
    expect(doc.error.message).toContain("--n must be an integer between 1 and 64");
    expect(out.stderr()).toBe("");
  });

  it("exits 2 for a dataset file that does not exist, before contacting any server", async () => {
    const out = buffers();
    expect(
      await main(
        [
          "submit",
          "/nonexistent/rows.parquet",
          "--agent",
          "a",
          "--n",
          "2",
          "--url",
          "http://127.0.0.1:9",
        ],
        out.io,
      ),
    ).toBe(2);
    expect(out.stderr()).toContain("no such file");
  });

  it("exits 3 with a hint when the server is unreachable", async () => {
    const out = buffers();
    expect(await main(["status", "--url", `http://127.0.0.1:${await freePort()}`], out.io)).toBe(3);
    expect(out.stderr()).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    expect(out.stderr()).toContain(
      "hint: is the stack running? Start it with `npx edge-rollout dev`",
    );
  });
});
