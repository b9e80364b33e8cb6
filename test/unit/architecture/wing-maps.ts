/**
 * @module Reading the one-screen map of a wing (`src/runtime/README.md` and the like): the paths it
 * cites, and the folders and packages its "May not import" section forbids. The maps cite files
 * relative to themselves, and a table row's bare file names relative to that row's folder, so a
 * line stays short; every other code span that does not end in `.ts`, `.md` or `/` is not a path.
 */
import { join } from "node:path";

/** Top-level folders a code span may start with to be read from the repository root. */
const ROOTED =
  /^(src|tools|functions|durable-objects|test|docs|scripts|bench|clients|examples|bin)\//;
const PATH_LIKE = /^[\w.-]+(\/[\w.-]+)*\/?$/;

function isPath(span: string): boolean {
  return PATH_LIKE.test(span) && (ROOTED.test(span) || /(\.ts|\.md|\/)$/.test(span));
}

/** Code spans of `line`, in order. */
function spans(line: string): string[] {
  return [...line.matchAll(/`([^`\s]+)`/g)].map((match) => match[1]!);
}

/**
 * Every path `map` (the text of `<wing>/README.md`) cites, relative to the repository root: rooted
 * spans as written, the first span of a table row against the wing, the rest of that row against
 * the row's folder, any other span against the wing.
 */
export function mapCitations(wing: string, map: string): string[] {
  return map.split("\n").flatMap((line) => {
    const cited = spans(line).filter(isPath);
    const row =
      line.startsWith("|") && cited[0]?.endsWith("/") && !ROOTED.test(cited[0]) ? cited[0] : null;
    return cited.map((span, i) => {
      if (ROOTED.test(span)) return span;
      const base = row && i > 0 ? join(wing, row) : wing;
      return join(base, span); // path.join keeps a folder's trailing slash
    });
  });
}

/**
 * What the map's "## May not import" section forbids: the code spans each of its bullets opens with
 * (those before the reason), split into repository folders or files and package names.
 */
export function forbiddenImports(map: string): { paths: string[]; packages: string[] } {
  const start = map.indexOf("## May not import");
  if (start < 0) return { paths: [], packages: [] };
  const cited = map
    .slice(start)
    .split("\n")
    .flatMap((line) => spans(/^- ((?:`[^`]+`(?:, )?)+)/.exec(line)?.[1] ?? ""));
  return {
    paths: cited.filter((span) => ROOTED.test(span)),
    packages: cited.filter((span) => !ROOTED.test(span)),
  };
}
