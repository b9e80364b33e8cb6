/**
 * Every code block of README.md, docs/ and examples/README.md that a user would copy, run as written against a fresh
 * local stack, in document order; any failure fails the test. New files under docs/ are picked up.
 *
 * - `sh` blocks run in bash with `set -euo pipefail` and `curl` failing on HTTP errors; `ts` blocks
 *   run as a module with tsx; `python` blocks with python3 (clients/python on PYTHONPATH, as
 *   `pip install -e clients/python` would); `json` blocks must parse; untagged blocks are output.
 * - Everything runs in a fresh copy of the repository (node_modules linked), so files the docs
 *   create or edit never touch this checkout, with `EDGE_ROLLOUT_URL` pointing at the stack.
 * - The docs say 8787 (API) and 8000 (model server); a test never uses fixed ports, so those are
 *   replaced by free ones, and `serves` blocks get `--port`/`--simulator-port` appended.
 * - Markers (`<!-- docs-test: … -->`, see test/fixtures/doc-blocks.ts) say how to treat a block;
 *   `skip` needs a reason, and every skipped block is listed in the last test's output.
 */
import { spawn, type ChildProcess } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  docBlocks,
  marker,
  missingExcerptLines,
  withPorts,
  type DocBlock,
} from "../fixtures/doc-blocks";
import { freePort } from "../../tools/simulator/free-port";

const root = resolve(import.meta.dirname, "../..");
const copy = resolve(root, `.tmp/docs-test-${process.pid}`);
const blocks = docBlocks(root);
const BLOCK_TIMEOUT_MS = 240_000;
const COPIED = (name: string) =>
  ![".git", "node_modules", ".tmp", ".wrangler", "coverage", "dist"].includes(name);

let ports = { api: 0, model: 0 };
let stack: { child: ChildProcess; output: () => string } | undefined;

function env(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    EDGE_ROLLOUT_URL: `http://127.0.0.1:${ports.api}`,
    PYTHONPATH: join(copy, "clients/python"),
    PYTHONDONTWRITEBYTECODE: "1",
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    XDG_CONFIG_HOME: join(copy, ".tmp/xdg"),
    npm_config_loglevel: "silent",
    FORCE_COLOR: "0",
  };
}

/** Runs a command in its own process group (so `&` children die with it); resolves with its outcome. */
function run(
  command: string,
  args: string[],
  timeoutMs = BLOCK_TIMEOUT_MS,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(command, args, {
      cwd: copy,
      env: env(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const kill = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      stderr += `\n[docs test: killed after ${timeoutMs} ms]`;
      kill();
    }, timeoutMs);
    child.once("close", (code) => {
      clearTimeout(timer);
      kill();
      done({ code, stdout, stderr });
    });
  });
}

async function stopStack(): Promise<void> {
  if (!stack) return;
  const { child } = stack;
  stack = undefined;
  if (child.exitCode !== null) return;
  const closed = new Promise((r) => child.once("close", r));
  process.kill(-child.pid!, "SIGINT");
  await Promise.race([closed, new Promise((r) => setTimeout(r, 15_000))]);
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // stopped cleanly
  }
}

/** Starts a stack command in the background and resolves once its API answers /health. */
async function startStack(commandLine: string): Promise<void> {
  await stopStack();
  const child = spawn(
    "bash",
    ["-c", `exec ${commandLine} --port ${ports.api} --simulator-port ${ports.model}`],
    { cwd: copy, env: env(), detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  stack = { child, output: () => output };
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`"${commandLine}" exited with ${child.exitCode}:\n${output}`);
    const healthy = await fetch(`http://127.0.0.1:${ports.api}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (healthy) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`"${commandLine}" did not serve /health within 120 s:\n${output}`);
}

function describeFailure(
  block: DocBlock,
  result: { code: number | null; stdout: string; stderr: string },
): string {
  return `${block.file}:${block.line} (${block.lang}) exited ${result.code}\n--- block ---\n${block.code}\n--- stdout ---\n${result.stdout.slice(-3000)}\n--- stderr ---\n${result.stderr.slice(-3000)}`;
}

async function runBlock(
  block: DocBlock,
  index: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const code = withPorts(block.code, ports);
  if (block.kind === "shell") {
    // curl fails on an HTTP error and says why; the docs' own flags (-s, -N, -d …) still apply.
    const preamble =
      'set -euo pipefail\ncurl() { command curl --fail-with-body --show-error "$@"; }\n';
    return run("bash", ["-c", preamble + code]);
  }
  const file = join(copy, `.docs-test-${index}.${block.kind === "ts" ? "mts" : "py"}`);
  writeFileSync(file, code);
  return block.kind === "ts"
    ? run(process.execPath, ["--import", "tsx", file])
    : run("python3", [file]);
}

async function runWithRetry(
  block: DocBlock,
  index: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const deadline = Date.now() + (marker(block, "retry") ? 60_000 : 0);
  for (;;) {
    const result = await runBlock(block, index);
    if (result.code === 0 || Date.now() > deadline) return result;
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

function excerptSource(path: string): string {
  const full = join(root, path);
  if (!existsSync(full)) throw new Error(`excerpt source ${path} does not exist`);
  if (!statSync(full).isDirectory()) return readFileSync(full, "utf8");
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), "utf8"))
    .join("\n");
}

describe("README.md and docs/ run as written (end to end, fresh local stack)", () => {
  beforeAll(async () => {
    rmSync(copy, { recursive: true, force: true });
    mkdirSync(copy, { recursive: true });
    for (const name of readdirSync(root).filter(COPIED))
      cpSync(join(root, name), join(copy, name), { recursive: true });
    symlinkSync(join(root, "node_modules"), join(copy, "node_modules"), "dir");
    ports = { api: await freePort(), model: await freePort() };
    await startStack("node bin/edge-rollout.mjs dev");
  }, 180_000);

  afterAll(async () => {
    await stopStack();
    rmSync(copy, { recursive: true, force: true });
  }, 60_000);

  blocks.forEach((block, index) => {
    if (block.kind === "output" || marker(block, "skip")) return;
    it(
      `${block.file}:${block.line} (${block.lang}${block.markers.length ? `, ${block.markers.map((m) => m.kind).join(", ")}` : ""})`,
      async () => {
        if (block.kind === "unknown")
          throw new Error(
            `${block.file}:${block.line}: no runner for \`\`\`${block.lang}; tag it sh, ts, python or json, or mark it <!-- docs-test: skip: why it cannot run here -->`,
          );
        if (block.kind === "json") {
          expect(
            () => JSON.parse(block.code),
            `${block.file}:${block.line} is not valid JSON`,
          ).not.toThrow();
          return;
        }
        const excerpt = marker(block, "excerpt");
        if (excerpt) {
          expect(
            missingExcerptLines(block.code, excerptSource(excerpt.path)),
            `${block.file}:${block.line}: lines not in ${excerpt.path}`,
          ).toEqual([]);
          return;
        }
        const file = marker(block, "file");
        if (file) {
          const target = resolve(copy, file.path);
          expect(
            target.startsWith(copy + "/"),
            `file marker ${file.path} must stay inside the repository`,
          ).toBe(true);
          mkdirSync(resolve(target, ".."), { recursive: true });
          writeFileSync(target, block.code);
          return;
        }
        if (marker(block, "serves")) {
          const command = block.code
            .split("\n")
            .map((line) => line.replace(/\s+#.*$/, "").trim())
            .filter(Boolean);
          expect(
            command,
            `${block.file}:${block.line}: a serves block is one "npx edge-rollout dev …" or "npm start …" command`,
          ).toHaveLength(1);
          expect(command[0]).toMatch(/^(npx edge-rollout dev|npm start)\b/);
          await startStack(
            command[0]!.startsWith("npm start") && !command[0]!.includes(" -- ")
              ? `${command[0]} --`
              : command[0]!,
          );
          return;
        }
        const logsBefore = stack?.output().length ?? 0;
        const result = await runWithRetry(block, index);
        if (result.code !== 0) throw new Error(describeFailure(block, result));
        const expected = marker(block, "expect");
        if (expected)
          expect(result.stdout, `${block.file}:${block.line} output`).toMatch(expected.pattern);
        const expectedLog = marker(block, "expect-log");
        if (expectedLog) {
          const deadline = Date.now() + 30_000;
          while (
            !expectedLog.pattern.test(stack?.output().slice(logsBefore) ?? "") &&
            Date.now() < deadline
          )
            await new Promise((r) => setTimeout(r, 500));
          expect(
            stack?.output().slice(logsBefore),
            `${block.file}:${block.line}: the stack's output`,
          ).toMatch(expectedLog.pattern);
        }
      },
      BLOCK_TIMEOUT_MS + 70_000,
    );
  });

  it("skips only blocks that say why they cannot run here", () => {
    const skipped = blocks.flatMap((block) => {
      const skip = marker(block, "skip");
      return skip ? [{ where: `${block.file}:${block.line}`, reason: skip.reason }] : [];
    });
    console.log(
      `docs test: ${blocks.length} blocks, ${skipped.length} not run:\n${skipped.map((s) => `  ${s.where}: ${s.reason}`).join("\n")}`,
    );
    for (const { where, reason } of skipped)
      expect(reason.length, `${where}: a skip needs its reason`).toBeGreaterThanOrEqual(20);
  });
});
