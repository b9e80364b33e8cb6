import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type ImportGraph, readImportGraph, CODE_ROOTS } from "./import-graph";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const RUNTIME = "src/runtime/";

/**
 * What `functions/` and `durable-objects/` may import under `src/` besides a folder's front door
 * (its `index.ts`): the wire types in `src/schemas/`, each schema file its own door (a zod const
 * and its type, nothing behind them to hide), and `src/errors.ts`, one file of the error classes
 * every layer throws and `app.onError` answers.
 */
const OPEN = ["src/schemas/", "src/errors.ts"];
/** Imports past a door, each for a reason the door cannot serve. */
const PAST_A_DOOR = [
  // The session's class wires its parts to the bindings (see session-front-doors.test.ts).
  "durable-objects/rollout-session.ts -> src/runtime/session/session-parts.ts",
  // The sandbox host is a Worker of its own without nodejs_compat: the SDK's door brings the
  // emitters and their node:async_hooks, which its bundle cannot resolve.
  "functions/sandbox-host.worker.ts -> src/sdk/run-code.ts",
];

/**
 * The folders of `src/runtime/`, lowest first, as the imports stand: a folder imports only folders
 * of a lower rank. The files at the runtime's root (what several objects share) stand below every
 * folder and import none.
 */
const RANKS: Record<string, number> = {
  // Leaves: one object's logic each (another object comes in as a port), or numbers.
  catalog: 0,
  claims: 0,
  eval: 0,
  feed: 0,
  online: 0,
  policy: 0,
  pressure: 0,
  // One rollout's object, reached through its door.
  session: 1,
  // What runs rollouts: a batch fans out over sessions, an engine runs one.
  batch: 2,
  engines: 2,
  // The driver leases a rollout from its session and hands it to its engine.
  driver: 3,
  // The directory types each object's stub by its interface, so it stands above them all.
  objects: 4,
};
const ROOT_RANK = -1;
/** Imports against the ranks, each wiring to the bindings that reaches other objects as the classes do. */
const AGAINST_THE_GRAIN = [
  // The gateway as the Worker builds it: admission through the directory's shards.
  "src/runtime/gateway-deps.ts -> src/runtime/objects/object-directory.ts",
  // The session's parts wired to the bindings (its class alone imports it): other objects through the directory.
  "src/runtime/session/session-parts.ts -> src/runtime/objects/object-directory.ts",
  // The feed shard's parts likewise (its class alone imports them): stale drops told to batches.
  "src/runtime/feed/feed-parts.ts -> src/runtime/objects/object-directory.ts",
];

/** The folder of `src/runtime/` that `path` is in (`feed`, `engines`, …), "" for the root's files, null outside. */
function runtimeFolder(path: string): string | null {
  if (!path.startsWith(RUNTIME)) return null;
  const rest = path.slice(RUNTIME.length);
  return rest.includes("/") ? rest.slice(0, rest.indexOf("/")) : "";
}

/** Imports from `functions/` or `durable-objects/` of a file under `src/` that is no door and not open. */
function pastFrontDoors(graph: ImportGraph): string[] {
  return [...graph]
    .filter(([file]) => /^(functions|durable-objects)\//.test(file))
    .flatMap(([file, targets]) =>
      targets
        .filter(
          (target) =>
            target.startsWith("src/") &&
            !target.endsWith("/index.ts") &&
            !OPEN.some((open) => target.startsWith(open)),
        )
        .map((target) => `${file} -> ${target}`),
    );
}

/** Imports from a folder of `src/runtime/` (or its root's files) of a folder of the same rank or above. */
function upwardImports(graph: ImportGraph): string[] {
  const rank = (folder: string) => (folder === "" ? ROOT_RANK : (RANKS[folder] ?? Infinity));
  return [...graph].flatMap(([file, targets]) => {
    const from = runtimeFolder(file);
    if (from === null) return [];
    return targets
      .filter((target) => {
        const to = runtimeFolder(target);
        return to !== null && to !== "" && to !== from && rank(to) >= rank(from);
      })
      .map((target) => `${file} -> ${target}`);
  });
}

/** Imports of the door of a folder the importing file is in: a door re-exports its folder, so that is a circle waiting. */
function ownDoors(graph: ImportGraph): string[] {
  return [...graph].flatMap(([file, targets]) =>
    targets
      .filter((target) => target.endsWith("/index.ts") && target !== file)
      .filter((target) => file.startsWith(target.slice(0, -"index.ts".length)))
      .map((target) => `${file} -> ${target}`),
  );
}

const graph = readImportGraph(root, [...CODE_ROOTS]);

describe("front doors (unit)", () => {
  it("finds an import past a door, an import up the ranks and a folder entering by its own door", () => {
    const sample: ImportGraph = new Map([
      ["functions/a.ts", ["src/runtime/feed/feed-core.ts", "src/runtime/feed/index.ts"]],
      ["functions/b.ts", ["src/schemas/feed.ts", "src/errors.ts", "src/runtime/index.ts"]],
      ["durable-objects/c.ts", ["src/sink/publication/r2-blobs.ts", "functions/env.ts"]],
      ["src/runtime/claims/d.ts", ["src/runtime/session/index.ts", "src/runtime/meta-table.ts"]],
      ["src/runtime/driver/e.ts", ["src/runtime/engines/agent-engine.ts"]],
      ["src/runtime/deadline.ts", ["src/runtime/eval/pass-at-k.ts"]],
      ["src/runtime/feed/f.ts", ["src/runtime/index.ts", "src/runtime/feed/index.ts"]],
    ]);
    expect(pastFrontDoors(sample)).toEqual([
      "functions/a.ts -> src/runtime/feed/feed-core.ts",
      "durable-objects/c.ts -> src/sink/publication/r2-blobs.ts",
    ]);
    expect(upwardImports(sample)).toEqual([
      "src/runtime/claims/d.ts -> src/runtime/session/index.ts",
      "src/runtime/deadline.ts -> src/runtime/eval/pass-at-k.ts",
    ]);
    expect(ownDoors(sample)).toEqual([
      "src/runtime/feed/f.ts -> src/runtime/index.ts",
      "src/runtime/feed/f.ts -> src/runtime/feed/index.ts",
    ]);
  });

  it("holds every import of src/ from functions/ and durable-objects/ to a door, the wire types or the errors", () => {
    expect(graph.size).toBeGreaterThan(300);
    expect(pastFrontDoors(graph).sort()).toEqual([...PAST_A_DOOR].sort());
  });

  it("gives every folder of src/runtime/ a rank", () => {
    const folders = readdirSync(`${root}${RUNTIME}`, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.sort()).toEqual(Object.keys(RANKS).sort());
  });

  it("has each folder of src/runtime/ import only folders ranked below it, and the root's files none", () => {
    expect(upwardImports(graph).sort()).toEqual([...AGAINST_THE_GRAIN].sort());
  });

  it("has no file import the door of a folder it is in: inside a folder, files import each other", () => {
    expect(ownDoors(graph)).toEqual([]);
  });
});
