import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { importCircles, readImportGraph, relativeSpecifiers } from "./import-graph";

const root = fileURLToPath(new URL("../../..", import.meta.url));

describe("import circles (unit)", () => {
  it("reads value, type-only, re-export and dynamic imports, and skips ones in comments and strings", () => {
    const source = [
      `import { a } from "./a";`,
      `import type { B } from "../b";`,
      `import {\n  type C,\n  d,\n} from "./c";`,
      `export { e } from "./e";`,
      `export type * from "./f";`,
      `const g = await import("./g");`,
      `import "./side-effect";`,
      `import { z } from "zod";`,
      `// import { x } from "./commented";`,
      `/** @example import { y } from "./doc"; */`,
      `const s = 'import { q } from "./string"';`,
    ].join("\n");
    expect(relativeSpecifiers(source)).toEqual([
      "./a",
      "../b",
      "./c",
      "./e",
      "./f",
      "./g",
      "./side-effect",
    ]);
  });

  it("finds a circle through any number of files, and a file importing itself", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
      ["e", ["e"]],
    ]);
    expect(importCircles(graph)).toEqual(expect.arrayContaining([["a", "b", "c"], ["e"]]));
    expect(importCircles(graph)).toHaveLength(2);
  });

  it("holds no import circle between files of src/, tools/, functions/ and durable-objects/", () => {
    const graph = readImportGraph(root, ["src", "tools", "functions", "durable-objects"]);
    expect(graph.size).toBeGreaterThan(100);
    expect(importCircles(graph)).toEqual([]);
  });
});
