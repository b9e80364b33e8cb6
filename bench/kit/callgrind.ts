/**
 * @module Counting the instructions a local workerd executes, with valgrind's callgrind: Miniflare
 * starts whatever `MINIFLARE_WORKERD_PATH` names, so a wrapper script runs the real workerd under
 * callgrind, and a count is taken between zeroing a process's counters and dumping them. Counts
 * repeat within a few per cent where CPU seconds on a shared VM move by tens of per cent.
 * Callgrind runs workerd ~50× slower: keep the counted work small.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Every workerd Miniflare starts from now on runs under callgrind; `stop` removes the wrapper and its dumps. */
export interface Callgrind {
  /** The pid of the one workerd started since the last call (its counters are what `count` reads). */
  newProcess(): number;
  /** Instructions `pid` executes while `work` runs, and what `work` returned. */
  count<T>(pid: number, work: () => Promise<T>): Promise<{ instructions: number; result: T }>;
  stop(): void;
}

/** Exits with status 2 and a hint unless valgrind is installed. */
export function requireValgrind(bench: string): void {
  try {
    execFileSync("valgrind", ["--version"], { stdio: "ignore" });
  } catch {
    console.error(`${bench} needs valgrind (apt-get install valgrind)`);
    process.exit(2);
  }
}

/** Installs the wrapper (sets MINIFLARE_WORKERD_PATH for this process). */
export function startCallgrind(): Callgrind {
  const dir = mkdtempSync(join(tmpdir(), "edge-rollout-callgrind-"));
  const real = join(process.cwd(), "node_modules/@cloudflare/workerd-linux-64/bin/workerd");
  const wrapper = join(dir, "workerd");
  // V8 writes code at run time, which callgrind must re-read (--smc-check). Counters only, no
  // per-instruction or jump detail.
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec valgrind --tool=callgrind --smc-check=all-non-file --dump-instr=no --collect-jumps=no --callgrind-out-file=${dir}/cg.%p.out ${real} "$@" 2>>${dir}/valgrind.log\n`,
    { mode: 0o755 },
  );
  process.env.MINIFLARE_WORKERD_PATH = wrapper;
  const known = new Set<number>();
  return {
    newProcess() {
      const pids = readdirSync(dir)
        .map((name) => /^cg\.(\d+)\.out$/.exec(name)?.[1])
        .filter((pid): pid is string => pid !== undefined)
        .map(Number)
        .filter((pid) => !known.has(pid));
      if (pids.length !== 1)
        throw new Error(`expected one new callgrind process, found ${pids.length}`);
      known.add(pids[0]!);
      return pids[0]!;
    },
    async count(pid, work) {
      execFileSync("callgrind_control", ["-z", String(pid)], { stdio: "ignore" });
      const result = await work();
      const before = new Set(readdirSync(dir));
      execFileSync("callgrind_control", ["-d", String(pid)], { stdio: "ignore" });
      const dump = readdirSync(dir).find(
        (name) => !before.has(name) && name.startsWith(`cg.${pid}`),
      );
      if (!dump) throw new Error(`callgrind wrote no dump for ${pid}`);
      const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, dump), "utf8"));
      if (!totals) throw new Error(`no totals in ${dump}`);
      return { instructions: Number(totals[1]), result };
    },
    stop: () => rmSync(dir, { recursive: true, force: true }),
  };
}
