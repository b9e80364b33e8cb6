import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  messagesToChat,
  parseMessagesCountTokensRequest,
  parseMessagesRequest,
} from "../../../../../src/gateway/apis/messages";
import type { JsonObject } from "../../../../../src/schemas/json";

/** Request bodies captured from the real Claude Code CLI (test/fixtures/harness-requests/README). */
const DIR = join(__dirname, "../../../../fixtures/harness-requests/claude-code");

interface Captured {
  name: string;
  path: string;
  body: unknown;
}

function captured(): Captured[] {
  if (!existsSync(DIR)) return [];
  return readdirSync(DIR)
    .filter((name) => name.endsWith(".json") && !name.endsWith(".meta.json"))
    .sort()
    .map((name) => {
      const meta = join(DIR, name.replace(/\.json$/, ".meta.json"));
      const path = existsSync(meta)
        ? String(JSON.parse(readFileSync(meta, "utf8")).path ?? "")
        : "";
      return { name, path, body: JSON.parse(readFileSync(join(DIR, name), "utf8")) };
    });
}

const fixtures = captured();
const isCountTokens = (fixture: Captured) => fixture.path.includes("count_tokens");

/** The chat body a captured call translates to (failing the test when the body is refused). */
function translate(fixture: Captured): JsonObject {
  const parsed = isCountTokens(fixture)
    ? parseMessagesCountTokensRequest(fixture.body)
    : parseMessagesRequest(fixture.body);
  if (!parsed.ok) throw new Error(`${fixture.name}: ${parsed.error.body.error.message}`);
  return messagesToChat(parsed.request).chat;
}

describe.skipIf(fixtures.length === 0)("Claude Code's captured requests", () => {
  it.each(fixtures.map((fixture) => [fixture.name, fixture] as const))(
    "%s parses and translates to a chat body with no cache_control",
    (_, fixture) => {
      const chat = translate(fixture);
      expect(Array.isArray(chat.messages)).toBe(true);
      const text = JSON.stringify(chat);
      expect(text).not.toContain("cache_control");
      expect(text).not.toContain("x-anthropic-billing-header");
      // Every thinking block the gateway signed names its call on the chat assistant message.
      const signed =
        JSON.stringify(fixture.body).match(/"signature":\s*"edge-rollout\.v1\./g) ?? [];
      const named = (chat.messages as JsonObject[]).filter(
        (m) => typeof m.x_gateway_call === "string",
      );
      expect(named.length).toBe(signed.length);
    },
  );

  it("extends the previous call's chat messages on every main-loop call (same tools)", () => {
    const chains = new Map<string, JsonObject[][]>();
    for (const fixture of fixtures.filter((f) => !isCountTokens(f))) {
      const chat = translate(fixture);
      const key = JSON.stringify(chat.tools ?? null);
      const chain = chains.get(key) ?? [];
      chain.push(chat.messages as JsonObject[]);
      chains.set(key, chain);
    }
    let compared = 0;
    for (const chain of chains.values())
      for (let i = 1; i < chain.length; i++) {
        const earlier = chain[i - 1]!;
        const later = chain[i]!;
        expect(later.length).toBeGreaterThan(earlier.length);
        expect(JSON.stringify(later.slice(0, earlier.length))).toBe(JSON.stringify(earlier));
        compared++;
      }
    expect(compared).toBeGreaterThan(0);
  });
});
