import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { postJson } from "./simulator-fixtures";

const QUESTION = { messages: [{ role: "user", content: "What is 25 * 4?" }] };
const boxed = (content: string): string | undefined => /\\boxed\{([^}]*)\}/.exec(content)?.[1];

describe("scripted answers", () => {
  let sim: VllmSimulator;
  let url: string;
  const answer = async (extra: Record<string, unknown> = {}): Promise<string> =>
    (await postJson(url, { ...QUESTION, ...extra })).body.choices[0].message.content as string;

  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, successRate: 0.5, seed: 3 });
    url = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it("varies outcomes of the same prompt across unseeded requests", async () => {
    const values = await Promise.all(Array.from({ length: 30 }, async () => boxed(await answer())));
    expect(values).toContain("100");
    expect(values.some((value) => value !== "100")).toBe(true);
  });

  it("reproduces an outcome for a fixed request seed, and for temperature 0", async () => {
    expect(await answer({ seed: 9 })).toBe(await answer({ seed: 9 }));
    expect(await answer({ temperature: 0 })).toBe(await answer({ temperature: 0 }));
  });

  it("is always right at successRate 1 and always wrong at 0", async () => {
    sim.configure({ successRate: 1 });
    const right = await Promise.all(Array.from({ length: 10 }, async () => boxed(await answer())));
    sim.configure({ successRate: 0 });
    const wrong = await Promise.all(Array.from({ length: 10 }, async () => boxed(await answer())));
    sim.configure({ successRate: 0.5 });
    expect(new Set(right)).toEqual(new Set(["100"]));
    expect(wrong).not.toContain("100");
  });

  it("thinks before answering in thinking mode", async () => {
    sim.configure({ thinking: true });
    const content = await answer();
    sim.configure({ thinking: false });
    expect(content).toMatch(/^<think>[^<]+<\/think>\n25 \* 4 = /);
  });

  it("falls back to a sentence when there is nothing to compute", async () => {
    const { body } = await postJson(url, {
      messages: [{ role: "user", content: "Tell me a story." }],
      seed: 1,
    });
    expect(body.choices[0].message.content).toMatch(/^[A-Z][a-z ]+\.$/);
  });
});
