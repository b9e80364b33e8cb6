/**
 * @module The repository's file-level import graph, read with TypeScript's import scanner: every static
 * `import`/`export … from` (type-only ones included, since a type-only circle still ties the files
 * together for a reader) and every dynamic `import("…")` with a relative specifier.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** File → the files it imports, paths relative to the root they were read from. */
export type ImportGraph = Map<string, string[]>;

/**
 * The relative module specifiers of `source`, as TypeScript's own scanner reads them (so comments
 * and strings that merely look like imports do not count).
 */
export function relativeSpecifiers(source: string): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((file) => file.fileName)
    .filter((name) => name.startsWith("."));
}

/** The package specifiers of `source` (`hono`, `cloudflare:workers`, `zod/v4`), read the same way. */
export function packageSpecifiers(source: string): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((file) => file.fileName)
    .filter((name) => !name.startsWith("."));
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : tsFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

function resolveSpecifier(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|ts)$/, "");
  for (const candidate of [`${stem}.ts`, join(base, "index.ts")])
    if (existsSync(candidate)) return candidate;
  return null;
}

/** The import graph of every `.ts` file under `folders` of `root`; imports leaving them are dropped. */
export function readImportGraph(root: string, folders: string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of folders.flatMap((folder) => tsFiles(join(root, folder)))) {
    const targets = relativeSpecifiers(readFileSync(file, "utf8"))
      .map((specifier) => resolveSpecifier(file, specifier))
      .filter((target): target is string => target !== null)
      .map((target) => relative(root, target));
    graph.set(relative(root, file), [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected groups of more than one file (or a file importing itself): each is an import circle. */
export function importCircles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm, iterative so a deep chain of imports cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let counter = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = graph.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== frame.node);
      if (group.length > 1 || targets.includes(frame.node)) circles.push(group.sort());
    }
  }
  return circles;
}

/** Every folder of the repository whose TypeScript imports the architecture tests read. */
export const CODE_ROOTS = [
  "src",
  "functions",
  "durable-objects",
  "tools",
  "bench",
  "scripts",
  "test",
] as const;
