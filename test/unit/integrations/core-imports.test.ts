import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../../..");
/** Everything the Worker bundle is built from, apart from the optional integrations themselves. */
const CORE = [
  "functions",
  "durable-objects",
  "src/sdk",
  "src/runtime",
  "src/gateway",
  "src/schemas",
  "src/sink",
  "src/agents",
];
const OPTIONAL =
  /from\s+["'](?:@openai\/agents[^"']*|ai|@ai-sdk\/[^"']+|[./]+(?:[^"']*\/)?integrations\/[^"']*)["']|import\(\s*["'](?:@openai\/agents|ai|@ai-sdk\/)/;

function sourceFiles(dir: string): string[] {
  return (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(dir, file));
}

describe("optional integrations stay out of the core (unit)", () => {
  it("no core module imports @openai/agents, ai, @ai-sdk/* or src/integrations", () => {
    const offenders = CORE.flatMap(sourceFiles).filter((file) =>
      OPTIONAL.test(readFileSync(join(ROOT, file), "utf8")),
    );
    expect(offenders).toEqual([]);
  });

  it("the pattern catches such an import", () => {
    expect(OPTIONAL.test('import { Agent } from "@openai/agents";')).toBe(true);
    expect(OPTIONAL.test('import { generateText } from "ai";')).toBe(true);
    expect(OPTIONAL.test('import { createAiSdkModel } from "../integrations/ai-sdk";')).toBe(true);
    expect(OPTIONAL.test('import OpenAI from "openai";')).toBe(false);
  });
});
