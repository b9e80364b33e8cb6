import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { postJson } from "./simulator-fixtures";

describe("the simulator's thinking switches (Qwen3's enable_thinking and /think)", () => {
  let sim: VllmSimulator;
  let url: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, maxModelLen: 4096 });
    url = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  const ask = async (content: string, extra: Record<string, unknown> = {}) =>
    (await postJson(url, { messages: [{ role: "user", content }], seed: 3, ...extra })).body
      .choices[0].message;

  it("thinks in the content when a request asks for it and the server runs no reasoning parser", async () => {
    expect(
      (await ask("What is 2 + 3?", { chat_template_kwargs: { enable_thinking: true } })).content,
    ).toMatch(/^<think>[\s\S]+<\/think>\n/);
    expect((await ask("/think What is 2 + 3?")).content).toMatch(/^<think>/);
    expect((await ask("What is 2 + 3?")).content).not.toContain("<think>");
    expect(
      (await ask("/no_think What is 2 + 3?", { chat_template_kwargs: { enable_thinking: true } }))
        .content,
    ).toMatch(/^<think>/);
  });

  it("splits the thinking off into `reasoning` when the server runs a reasoning parser", async () => {
    await fetch(`${sim.url}/sim/config`, {
      method: "PUT",
      body: JSON.stringify({ reasoningParser: true }),
    });
    const message = await ask("/think What is 2 + 3?");
    expect(message.reasoning).toEqual(expect.any(String));
    expect(message.content).not.toContain("<think>");
  });
});
