import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResultMessage } from "../../../src/schemas/result-message";
import { validateAtif } from "../../../src/sink/formats/atif-schema";
import { publishRollout } from "../../../src/sink/publication/publish-rollout";
import { RolloutRecord } from "../../../src/sink/publication/rollout-record";
import { rolloutSamplesKey } from "../../../src/sink/publication/r2-keys";
import { columnsToSamples, readSampleTable } from "../../../src/sink/formats/sample-columns";
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
    // Created alone: nothing reads an announcement (the next test), so none is sent.
    expect(sent).toEqual([]);
    expect(message.samples).toBe(1);
  });

  it("writes the sample table only for a trainer, and announces only what a trainer or a batch reads", async () => {
    const talk = await calculatorConversation(clientFor(sim), "r-t", ["What is 2 + 3?"]);
    const published = async (group: Record<string, unknown> | null) => {
      const blobs = new Map<string, string | ArrayBuffer>();
      const sent: ResultMessage[] = [];
      const deps = {
        blobs: {
          put: async (key: string, body: string | ArrayBuffer) => void blobs.set(key, body),
          get: async () => null,
        },
        results: { send: async (m: ResultMessage) => void sent.push(m) },
        now: () => 1,
      };
      const group_ = group && { uid: "g", sample_index: 0, group_size: 2, ...group };
      const message = await publishRollout(deps, viewOf("r-t", talk.calls), group_ as never);
      return { blobs, sent, message };
    };
    const storedOnly = ["rollouts/r-t/atif.json", "rollouts/r-t/record.json"];
    // Alone, or in an `infer` group outside a batch: nothing pulls the samples (the record holds
    // them) and nothing reads the message, which is still returned.
    for (const alone of [await published(null), await published({ data_manager: "infer" })]) {
      expect([...alone.blobs.keys()].sort()).toEqual(storedOnly);
      expect(alone.sent).toEqual([]);
      expect(alone.message.samples).toBe(1);
    }
    // An `infer` batch's member: its tracker counts the message; no trainer pulls the samples.
    const evaluated = await published({ data_manager: "infer", batch_id: "b-1" });
    expect([...evaluated.blobs.keys()].sort()).toEqual(storedOnly);
    expect(evaluated.sent).toEqual([evaluated.message]);
    // A trainer's: the table (the record's samples, in Arrow) and the message.
    const trained = await published({ data_manager: "train" });
    expect(trained.sent).toEqual([trained.message]);
    const table = columnsToSamples(
      readSampleTable(new Uint8Array(trained.blobs.get(rolloutSamplesKey("r-t")) as ArrayBuffer)),
    );
    const record = RolloutRecord.parse(
      JSON.parse(trained.blobs.get(trained.message.key) as string),
    );
    expect(table).toEqual(record.samples);
  });
});
