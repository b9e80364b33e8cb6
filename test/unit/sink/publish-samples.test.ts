import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResultMessage } from "../../../src/schemas/result-message";
import { validateAtif } from "../../../src/sink/formats/atif-schema";
import { publishRollout } from "../../../src/sink/publication/publish-rollout";
import { RolloutRecord } from "../../../src/sink/publication/rollout-record";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { calculatorConversation, clientFor, expectExactAgainst, viewOf } from "./sink-fixtures";

describe("publishRollout with real calls", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 4, successRate: 1 });
  });
  afterAll(() => sim.close());

  it("stores token-exact samples in the record and a valid ATIF document beside it", async () => {
    const talk = await calculatorConversation(clientFor(sim), "r-p", ["What is 12 * 12?"]);
    const blobs = new Map<string, string>();
    const sent: ResultMessage[] = [];
    const deps = {
      blobs: {
        put: async (key: string, body: string | ArrayBuffer) => void blobs.set(key, body as string),
        get: async () => null,
      },
      results: { send: async (m: ResultMessage) => void sent.push(m) },
      now: () => 1,
    };
    const message = await publishRollout(deps, viewOf("r-p", talk.calls), null);
    const record = RolloutRecord.parse(JSON.parse(blobs.get(message.key)!));
    expect(record.samples).toHaveLength(1);
    expect(record.drift_splits).toBe(0);
    expectExactAgainst(record.samples[0]!, talk.calls);
    expect(validateAtif(JSON.parse(blobs.get(message.atif_key)!))).toEqual([]);
    expect(sent).toEqual([message]);
    expect(message.samples).toBe(1);
  });
});
