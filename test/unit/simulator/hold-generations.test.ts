/** Unit: the simulator's holdGenerations, which makes calls overlap without racing a clock (issue 27). */
import { afterEach, describe, expect, it } from "vitest";
import { startVllmSimulator, type VllmSimulator } from "../../../tools/simulator";

let sim: VllmSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const MODEL = "hold-test-model";
const chat = (url: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 4,
    }),
  });

async function until(probe: () => boolean): Promise<void> {
  while (!probe()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("holdGenerations", () => {
  it("counts held calls as arrived and answers none of them until released, then all", async () => {
    sim = await startVllmSimulator({ port: 0, seed: 1, model: MODEL });
    const release = sim.holdGenerations();
    const answered: number[] = [];
    const calls = [chat(sim.url), chat(sim.url)].map((call) =>
      call.then((response) => (answered.push(response.status), response.text())),
    );
    await until(() => (sim!.stats().byEndpoint["POST /v1/chat/completions"] ?? 0) === 2);
    // Both have arrived; a round trip to the simulator after that still finds neither answered.
    expect((await fetch(`${sim.url}/health`)).status).toBe(200);
    expect(answered).toEqual([]);
    release();
    await Promise.all(calls);
    expect(answered).toEqual([200, 200]);
    // Released means released: a later call is answered without another release.
    expect((await chat(sim.url)).status).toBe(200);
  });

  it("lets held calls go when the simulator closes", async () => {
    sim = await startVllmSimulator({ port: 0, seed: 1, model: MODEL });
    sim.holdGenerations();
    const call = chat(sim.url).then(
      (response) => response.status,
      () => "connection closed",
    );
    await until(() => (sim!.stats().byEndpoint["POST /v1/chat/completions"] ?? 0) === 1);
    await sim.close();
    sim = undefined;
    expect([200, "connection closed"]).toContain(await call);
  });
});
