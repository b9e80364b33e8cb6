import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type ImportGraph, readImportGraph, CODE_ROOTS } from "./import-graph";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const SESSION = "src/runtime/session/";
/**
 * The session's parts, lowest first: a part imports only parts of a lower rank, so the kernel
 * everything shares imports no other part, and no part imports the session's root files (its
 * interface, its door, its wiring), which stand above them all.
 */
const RANKS: Record<string, number> = {
  kernel: 0,
  claims: 1,
  publication: 1,
  fork: 1,
  calls: 1,
  lifecycle: 2,
};
const ROOT_RANK = 3;
/** What Worker code outside the session may import besides its door: the Durable Object's wiring. */
const WIRING = {
  file: "src/runtime/session/session-parts.ts",
  by: "durable-objects/rollout-session.ts",
};

/** The part of the session `path` is in (`kernel`, `calls`, …), "" for its root files, null outside it. */
function sessionPart(path: string): string | null {
  if (!path.startsWith(SESSION)) return null;
  const rest = path.slice(SESSION.length);
  return rest.includes("/") ? rest.slice(0, rest.indexOf("/")) : "";
}

/**
 * Imports that reach into a part of the session past its front door (`<part>/index.ts`) from a
 * file outside that part. A unit test under `test/unit/runtime/session/<part>/` tests that part's
 * files one by one and may import them.
 */
function pastFrontDoors(graph: ImportGraph): string[] {
  return [...graph].flatMap(([file, targets]) =>
    targets
      .filter((target) => {
        const part = sessionPart(target);
        if (!part || target === `${SESSION}${part}/index.ts`) return false;
        return (
          !file.startsWith(`${SESSION}${part}/`) &&
          !file.startsWith(`test/unit/runtime/session/${part}/`)
        );
      })
      .map((target) => `${file} -> ${target}`),
  );
}

const graph = readImportGraph(root, [...CODE_ROOTS]);

describe("the session's front doors (unit)", () => {
  it("finds an import past a part's index.ts from outside the part, and allows one inside it", () => {
    const sample: ImportGraph = new Map([
      ["src/runtime/batch/a.ts", ["src/runtime/session/fork/fork-plan.ts"]],
      ["src/runtime/batch/b.ts", ["src/runtime/session/fork/index.ts"]],
      ["src/runtime/session/lifecycle/c.ts", ["src/runtime/session/kernel/session-kernel.ts"]],
      ["src/runtime/session/kernel/d.ts", ["src/runtime/session/kernel/session-state.ts"]],
      ["src/runtime/session/session-api.ts", ["src/runtime/session/calls/gateway-call.ts"]],
      ["test/unit/runtime/session/kernel/e.test.ts", ["src/runtime/session/kernel/event-hub.ts"]],
      ["test/unit/runtime/session/fork/f.test.ts", ["src/runtime/session/kernel/event-hub.ts"]],
    ]);
    expect(pastFrontDoors(sample)).toEqual([
      "src/runtime/batch/a.ts -> src/runtime/session/fork/fork-plan.ts",
      "src/runtime/session/lifecycle/c.ts -> src/runtime/session/kernel/session-kernel.ts",
      "src/runtime/session/session-api.ts -> src/runtime/session/calls/gateway-call.ts",
      "test/unit/runtime/session/fork/f.test.ts -> src/runtime/session/kernel/event-hub.ts",
    ]);
  });

  it("gives every part of src/runtime/session/ a rank and an index.ts", () => {
    const parts = readdirSync(`${root}${SESSION}`, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(parts.sort()).toEqual(Object.keys(RANKS).sort());
    expect(parts.filter((part) => !existsSync(`${root}${SESSION}${part}/index.ts`))).toEqual([]);
  });

  it("holds no import of a part's file past its index.ts from outside the part, in any folder", () => {
    expect(graph.size).toBeGreaterThan(300);
    expect(pastFrontDoors(graph)).toEqual([]);
  });

  it("has each part import only parts below it, and none the session's root files", () => {
    const rank = (part: string) => (part === "" ? ROOT_RANK : RANKS[part]!);
    const upward = [...graph].flatMap(([file, targets]) => {
      const from = sessionPart(file);
      if (from === null) return [];
      return targets
        .filter((target) => {
          const to = sessionPart(target);
          return to !== null && to !== from && rank(to) >= rank(from);
        })
        .map((target) => `${file} -> ${target}`);
    });
    expect(upward).toEqual([]);
  });

  it("lets Worker code outside the session import it through index.ts, and its class the wiring too", () => {
    const worker = [...graph].filter(
      ([file]) => /^(src|functions|durable-objects)\//.test(file) && sessionPart(file) === null,
    );
    const reaching = worker.flatMap(([file, targets]) =>
      targets
        .filter((target) => sessionPart(target) !== null && target !== `${SESSION}index.ts`)
        .map((target) => `${file} -> ${target}`),
    );
    expect(reaching).toEqual([`${WIRING.by} -> ${WIRING.file}`]);
  });
});
