import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const DIRECTORY = "src/runtime/objects/object-directory.ts";
/** How a Durable Object is addressed; only the directory may do it. */
const ADDRESSING = new Set(["idFromName", "idFromString", "newUniqueId"]);

/** The Durable Object namespace bindings wrangler.toml declares (ROLLOUT_SESSION, …). */
function objectBindings(): string[] {
  const wrangler = readFileSync(`${root}wrangler.toml`, "utf8");
  return [...wrangler.matchAll(/\[\[durable_objects\.bindings\]\]\s*name = "(\w+)"/g)].map(
    (match) => match[1]!,
  );
}

/**
 * Where `source` addresses an object or touches a namespace binding: a call of `idFromName` and
 * the like, or any name that is a binding (`env.ROLLOUT_SESSION`, `{ CLAIM_QUEUE }`), so a
 * namespace's `get` cannot happen either. Read from the syntax tree: comments and strings do not count.
 */
function objectReaches(source: string, bindings: string[]): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && (ADDRESSING.has(node.text) || bindings.includes(node.text)))
      found.push(node.text);
    node.forEachChild(visit);
  };
  visit(ts.createSourceFile("source.ts", source, ts.ScriptTarget.ES2022, true));
  return found;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

describe("the object directory (unit)", () => {
  it("finds a namespace reached by hand, and ignores comments and strings", () => {
    const source = [
      `const stub = env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(id));`,
      `const { CLAIM_QUEUE } = env;`,
      `const other = namespace.get(namespace.idFromString(hex));`,
      `// env.POLICY_STORE.idFromName("default")`,
      `const text = "TRAINER_FEED.newUniqueId()";`,
    ].join("\n");
    expect(objectReaches(source, objectBindings())).toEqual([
      "ROLLOUT_SESSION",
      "ROLLOUT_SESSION",
      "idFromName",
      "CLAIM_QUEUE",
      "idFromString",
    ]);
  });

  it("is the only file of src/, functions/ and durable-objects/ that addresses a Durable Object", () => {
    const bindings = objectBindings();
    expect(bindings.length).toBeGreaterThanOrEqual(7);
    const files = ["src", "functions", "durable-objects"]
      .flatMap((folder) => tsFiles(join(root, folder)))
      .map((file) => relative(root, file));
    const offenders = files
      .filter((file) => file !== DIRECTORY)
      .flatMap((file) =>
        objectReaches(readFileSync(join(root, file), "utf8"), bindings).map(
          (name) => `${file}: ${name}`,
        ),
      );
    expect(offenders).toEqual([]);
    expect(objectReaches(readFileSync(join(root, DIRECTORY), "utf8"), bindings)).toEqual(
      expect.arrayContaining([...bindings, "idFromName"]),
    );
  });
});
