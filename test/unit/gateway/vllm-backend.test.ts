import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALCULATE_TOOL } from "../../../src/agents/calculator/calculate-tool";
import { createVllmBackend } from "../../../src/gateway/backends";
import type { JsonObject } from "../../../src/schemas/json";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";

const ctx = { rolloutId: "r-1" };
const messages = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "What is 7 * 6? ünï 🧮" },
];

/** A server that answers every path with `status` and logs the paths it was asked for. */
async function startPlainServer(status: number) {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? "");
    req
      .resume()
      .on("end", () =>
        res
          .writeHead(status, { "content-type": "application/json" })
          .end('{"detail": "Not Found"}'),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe("createVllmBackend", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 2 });
  });
  afterAll(() => sim.close());

  it("posts chat completions under the base URL and names it as the replica", async () => {
    const backend = createVllmBackend({ baseUrl: `${sim.url}/v1/` });
    const before = sim.stats().byEndpoint["POST /v1/chat/completions"] ?? 0;
    const reply = await backend.request("/chat/completions", { messages, max_tokens: 16 }, ctx);
    expect(reply.replica).toBe(`${sim.url}/v1`);
    expect((reply.body as { object: string }).object).toBe("chat.completion");
    expect(sim.stats().byEndpoint["POST /v1/chat/completions"]).toBe(before + 1);
  });

  it("counts exactly the prompt tokens the chat call renders, with and without tools", async () => {
    const backend = createVllmBackend({ baseUrl: `${sim.url}/v1` });
    for (const extra of [{}, { tools: [CALCULATE_TOOL] }] as JsonObject[]) {
      const body: JsonObject = {
        model: "sim-qwen3",
        messages,
        ...extra,
        max_tokens: 16,
        return_token_ids: true,
      };
      const chat = (await backend.request("/chat/completions", body, ctx)).body as {
        prompt_token_ids: number[];
      };
      expect(await backend.countChatTokens!(body, ctx)).toBe(chat.prompt_token_ids.length);
    }
    expect(sim.stats().byEndpoint["POST /tokenize"]).toBe(2);
  });

  it("returns null without /tokenize and stops asking after a 404", async () => {
    const server = await startPlainServer(404);
    const backend = createVllmBackend({ baseUrl: `${server.url}/v1` });
    expect(await backend.countChatTokens!({ messages }, ctx)).toBeNull();
    expect(await backend.countChatTokens!({ messages }, ctx)).toBeNull();
    await server.close();
    expect(server.paths).toEqual(["/tokenize"]);
  });

  it("returns null for a failing /tokenize but asks again next time", async () => {
    const server = await startPlainServer(500);
    const backend = createVllmBackend({ baseUrl: `${server.url}/v1` });
    expect(await backend.countChatTokens!({ messages }, ctx)).toBeNull();
    expect(await backend.countChatTokens!({ messages }, ctx)).toBeNull();
    await server.close();
    expect(server.paths).toEqual(["/tokenize", "/tokenize"]);
  });
});
