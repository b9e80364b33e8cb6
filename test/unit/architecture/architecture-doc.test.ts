import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const doc = readFileSync(`${root}docs/architecture.md`, "utf8");
const wrangler = readFileSync(`${root}wrangler.toml`, "utf8");

/** Repository paths the page cites in code spans (templates such as `<id>` or `*` left out). */
function citedPaths(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\s]+)`/g)].map((match) => match[1]!);
  return spans.filter((span) => /^(src|functions|durable-objects|test|docs|scripts|bench|clients|examples|bin)\//.test(span) && !/[<*{…]/.test(span));
}

describe("docs/architecture.md (unit)", () => {
  it("cites only files and folders that exist in the repository, and none outside it", () => {
    const cited = citedPaths(doc);
    expect(cited.length).toBeGreaterThan(20);
    expect(cited.filter((path) => !existsSync(`${root}${path}`))).toEqual([]);
    expect(doc).not.toMatch(/`\.\.\//);
  });

  it("lists every Durable Object class bound in wrangler.toml in its table", () => {
    const classes = [...wrangler.matchAll(/^class_name = "(\w+)"/gm)].map((match) => match[1]!);
    expect(classes.length).toBeGreaterThanOrEqual(7);
    const table = doc.slice(doc.indexOf("## The Durable Objects"), doc.indexOf("## The session"));
    expect(classes.filter((name) => !table.includes(`| \`${name}\` (`))).toEqual([]);
  });
});
