import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { packageSpecifiers, readImportGraph } from "./import-graph";
import { forbiddenImports, mapCitations } from "./wing-maps";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const doc = readFileSync(`${root}docs/architecture.md`, "utf8");
const wrangler = readFileSync(`${root}wrangler.toml`, "utf8");

/** Repository paths the page cites in code spans (templates such as `<id>` or `*` left out). */
function citedPaths(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\s]+)`/g)].map((match) => match[1]!);
  return spans.filter(
    (span) =>
      /^(src|tools|functions|durable-objects|test|docs|scripts|bench|clients|examples|bin)\//.test(
        span,
      ) && !/[<*{…]/.test(span),
  );
}

describe("docs/architecture.md (unit)", () => {
  it("cites only files and folders that exist in the repository, and none outside it", () => {
    const cited = citedPaths(doc);
    expect(cited.length).toBeGreaterThan(20);
    expect(cited.filter((path) => !existsSync(`${root}${path}`))).toEqual([]);
    expect(doc).not.toMatch(/`\.\.\//);
  });

  it("keeps the Worker's code (src/, functions/, durable-objects/) from importing the Node programs in tools/", () => {
    const graph = readImportGraph(root, ["src", "functions", "durable-objects"]);
    expect(graph.size).toBeGreaterThan(100);
    const broken = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => target.startsWith("tools/"))
        .map((target) => `${file} -> ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it("has no import pointing up a layer: src/ below durable-objects/ below functions/", () => {
    const graph = readImportGraph(root, ["src", "functions", "durable-objects"]);
    const rank = (path: string) =>
      path.startsWith("functions/") ? 2 : path.startsWith("durable-objects/") ? 1 : 0;
    const upward = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => rank(target) > rank(file)).map((target) => `${file} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("lists every Durable Object class bound in wrangler.toml in its table", () => {
    const classes = [...wrangler.matchAll(/^class_name = "(\w+)"/gm)].map((match) => match[1]!);
    expect(classes.length).toBeGreaterThanOrEqual(7);
    const table = doc.slice(doc.indexOf("## The Durable Objects"), doc.indexOf("## The session"));
    expect(classes.filter((name) => !table.includes(`| \`${name}\` (`))).toEqual([]);
  });
});

/** The wings with a one-screen map (`<wing>/README.md`), each linked from docs/architecture.md. */
const WINGS = ["src/runtime", "src/gateway", "src/sink", "functions"];

function folders(dir: string): string[] {
  return readdirSync(`${root}${dir}`, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [`${dir}/${entry.name}/`, ...folders(`${dir}/${entry.name}`)]);
}

describe.each(WINGS)("the map of %s (unit)", (wing) => {
  const map = readFileSync(`${root}${wing}/README.md`, "utf8");

  it("fits on a screen, is linked from docs/architecture.md, and cites only paths that exist", () => {
    expect(map.split("\n").length).toBeLessThanOrEqual(60);
    expect(doc).toContain(`(../${wing}/README.md)`);
    const cited = mapCitations(wing, map);
    expect(cited.length).toBeGreaterThan(10);
    expect(cited.filter((path) => !existsSync(`${root}${path}`))).toEqual([]);
  });

  it("names every folder of the wing, so a new folder without a line fails", () => {
    const cited = new Set(mapCitations(wing, map));
    expect(folders(wing).filter((folder) => !cited.has(folder))).toEqual([]);
  });

  it("holds no import its map forbids", () => {
    const { paths, packages } = forbiddenImports(map);
    expect(paths.length + packages.length).toBeGreaterThan(0);
    const graph = readImportGraph(root, [wing]);
    const broken = [...graph].flatMap(([file, targets]) => [
      ...targets
        .filter((target) => paths.some((path) => target.startsWith(path)))
        .map((target) => `${file} -> ${target}`),
      ...packageSpecifiers(readFileSync(`${root}${file}`, "utf8"))
        .filter((name) =>
          packages.some((banned) => name === banned || name.startsWith(`${banned}/`)),
        )
        .map((name) => `${file} -> ${name}`),
    ]);
    expect(broken).toEqual([]);
  });
});
