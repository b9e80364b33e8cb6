/**
 * The simulator's wire layer in front of an external engine process (engine/external-token-source.ts):
 * a loopback server speaking the step protocol picks every token; the simulator renders, stops,
 * streams and reports errors around it as it does for its scripted model.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EOS_TOKEN_ID, type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import { postJson } from "../simulator-fixtures";

interface StepSequence {
  seq_id: number;
  prompt_ids: number[];
  output_ids: number[];
  sampling: { min_tokens: number; eos_token_id: number; top_logprobs: number };
}

/** A toy engine: counts up from the last prompt id, then EOS after 5 tokens (unless min_tokens says more). */
function startEngine(): Promise<{
  url: string;
  server: Server;
  steps: StepSequence[][];
  broken: { on: boolean };
  outOfVocabulary: { on: boolean };
}> {
  const steps: StepSequence[][] = [];
  const broken = { on: false };
  const outOfVocabulary = { on: false };
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      if (req.url === "/weights") return res.end(JSON.stringify({ weight_version: 7 }));
      const { sequences } = JSON.parse(text) as { sequences: StepSequence[] };
      steps.push(sequences);
      if (broken.on) return res.end(JSON.stringify({ tokens: [{ id: "x" }] }));
      if (outOfVocabulary.on)
        return res.end(
          JSON.stringify({ tokens: sequences.map(() => ({ id: 10_000_000, logprob: -1 })) }),
        );
      const tokens = sequences.map((s) => {
        const k = s.output_ids.length;
        const id = k >= Math.max(5, s.sampling.min_tokens) ? s.sampling.eos_token_id : 100 + k;
        return { id, logprob: -0.25 * (k + 1), top: [{ id: 5, logprob: -9 }] };
      });
      res.end(JSON.stringify({ tokens, weight_version: 7 }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        server,
        steps,
        broken,
        outOfVocabulary,
      }),
    ),
  );
}

describe("an external token source", () => {
  let sim: VllmSimulator;
  let engine: Awaited<ReturnType<typeof startEngine>>;
  beforeAll(async () => {
    engine = await startEngine();
    sim = await startVllmSimulator({ port: 0, engine: { tokenSourceUrl: engine.url } });
  });
  afterAll(async () => {
    await sim.close();
    engine.server.close();
  });
  const url = () => `${sim.url}/v1/completions`;

  it("answers with the tokens and log-probs the engine picked, one batched step per token", async () => {
    const prompt = [11, 12, 13];
    const { body } = await postJson(url(), {
      prompt,
      max_tokens: 20,
      return_token_ids: true,
      logprobs: 1,
    });
    const choice = body.choices[0];
    expect(choice.token_ids).toEqual([100, 101, 102, 103, 104, EOS_TOKEN_ID]);
    expect(choice.finish_reason).toBe("stop");
    expect(choice.logprobs.token_logprobs).toEqual([-0.25, -0.5, -0.75, -1, -1.25, -1.5]);
    const last = engine.steps.at(-1)![0]!;
    expect(last.prompt_ids).toEqual(prompt);
    expect(last.output_ids).toEqual([100, 101, 102, 103, 104]);
  });

  it("passes min_tokens to the engine, whose mask it is, and still caps the length itself", async () => {
    const { body } = await postJson(url(), {
      prompt: [11],
      max_tokens: 7,
      min_tokens: 6,
      return_token_ids: true,
    });
    expect(body.choices[0].token_ids).toEqual([100, 101, 102, 103, 104, 105, EOS_TOKEN_ID]);
    expect(engine.steps.at(-1)![0]!.sampling.min_tokens).toBe(6);
    const capped = await postJson(url(), { prompt: [11], max_tokens: 3, return_token_ids: true });
    expect(capped.body.choices[0]).toMatchObject({
      token_ids: [100, 101, 102],
      finish_reason: "length",
    });
  });

  it("refuses a token id outside the vocabulary with vLLM's 500, and keeps serving", async () => {
    engine.outOfVocabulary.on = true;
    try {
      const { status, body } = await postJson(url(), { prompt: [11], max_tokens: 3 });
      expect(status).toBe(500);
      expect(JSON.stringify(body)).toMatch(/outside the vocabulary/);
    } finally {
      engine.outOfVocabulary.on = false;
    }
    expect((await postJson(url(), { prompt: [11], max_tokens: 2 })).status).toBe(200);
  });

  it("answers vLLM's 500 when the engine's reply is not the protocol's, naming the field", async () => {
    engine.broken.on = true;
    try {
      const { status, body } = await postJson(url(), { prompt: [11], max_tokens: 3 });
      expect(status).toBe(500);
      expect(JSON.stringify(body)).toMatch(/tokens\.0\.id/);
    } finally {
      engine.broken.on = false;
    }
  });
});
