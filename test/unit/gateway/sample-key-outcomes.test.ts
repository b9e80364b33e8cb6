/**
 * The gateway forwards each call's sample key, and the simulator keys its outcomes by it: the same
 * row and sample in two batches (two arms of a benchmark) get the same tokens and draws whatever
 * other traffic runs between them; another sample of the row gets its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVllmBackend } from "../../../src/gateway/backends";
import { type GatewayCall, createGateway } from "../../../src/gateway/gateway";
import type { JsonObject } from "../../../src/schemas/json";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { postJson } from "../simulator/simulator-fixtures";
import { ROOMY_LIMITS } from "./backends/backend-fixtures";

const limits = ROOMY_LIMITS;
const body: JsonObject = { messages: [{ role: "user", content: "Tell me a story." }] };

describe("sample-keyed outcomes through the gateway", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, tail: { distribution: "lognormal" } });
  });
  afterAll(() => sim.close());

  const send = async (rolloutId: string) => {
    const gateway = createGateway({
      policy: null,
      backendFor: () => createVllmBackend({ baseUrl: `${sim.url}/v1` }),
      defaultModel: "sim-qwen3",
      now: Date.now,
    });
    const call: GatewayCall = {
      rolloutId,
      stepId: null,
      callId: `${rolloutId}/0`,
      train: true,
      limits,
      replicaHint: null,
      whileSyncing: "refuse",
    };
    return (await gateway.send("/chat/completions", body, call)).call;
  };

  it("gives one row's sample the same tokens and logprobs in two batches, and another sample its own", async () => {
    const first = await send("arm-a:4:1");
    // Unkeyed traffic in between moves the simulator's request counter.
    for (let i = 0; i < 3; i++) await postJson(`${sim.url}/v1/chat/completions`, body);
    const again = await send("arm-b:4:1.retry-1");
    const other = await send("arm-a:4:2");
    expect(again.completion_token_ids).toEqual(first.completion_token_ids);
    expect(again.logprobs).toEqual(first.logprobs);
    expect(other.completion_token_ids).not.toEqual(first.completion_token_ids);
  });
});
