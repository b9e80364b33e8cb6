/**
 * Wire compatibility with vLLM, part 4: sampling parameters, on both endpoints, as vLLM's
 * SamplingParams defines them (vllm/sampling_params.py, _verify_args), the scheduler's per-token
 * check_stop (vllm/v1/core/sched/utils.py: min_tokens, ignore_eos, stop_token_ids with the id as
 * stop_reason, max_tokens) and the detokenizer's stop strings (vllm/v1/engine/detokenizer.py: text
 * cut before the stop string unless include_stop_str_in_output, streamed text held back so it
 * equals the final text). Outcomes are pinned with a request `seed` or the `x-sample-key` header.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type VllmSimulator,
  startVllmSimulator,
  tokenText,
  tokenizerFor,
} from "../../../../tools/simulator";
import { type JsonReply, jsonChunks, postJson, postSse } from "../simulator-fixtures";

const QUESTION = [{ role: "user", content: "Say something." }];
const PROMPT = "Once upon a time";
const KEY = { "x-sample-key": "sampling-parameters-1" };
const toy = tokenizerFor("toy");

/** The first choice of a reply. */
const first = (reply: JsonReply) => reply.body.choices[0];

describe("vLLM wire: sampling parameters", () => {
  let sim: VllmSimulator;
  let chat: string;
  let completions: string;
  const asked = (extra: Record<string, unknown>) => ({
    messages: QUESTION,
    return_token_ids: true,
    ...extra,
  });
  const prompted = (extra: Record<string, unknown>) => ({
    prompt: PROMPT,
    return_token_ids: true,
    ...extra,
  });
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, tokenizer: "toy" });
    chat = `${sim.url}/v1/chat/completions`;
    completions = `${sim.url}/v1/completions`;
  });
  afterAll(() => sim.close());

  describe("ignore_eos", () => {
    it("keeps a chat answer going past EOS to exactly max_tokens, finishing length", async () => {
      const plain = first(await postJson(chat, asked({ seed: 1, max_tokens: 60 })));
      expect(plain.finish_reason).toBe("stop");
      expect(plain.token_ids.length).toBeLessThan(60);
      const eos = plain.token_ids.at(-1);
      const { body } = await postJson(chat, asked({ seed: 1, max_tokens: 60, ignore_eos: true }));
      expect(body.choices[0].finish_reason).toBe("length");
      expect(body.choices[0].token_ids).toHaveLength(60);
      expect(body.choices[0].token_ids).not.toContain(eos);
      expect(body.usage.completion_tokens).toBe(60);
    });

    it("keeps a completion going past EOS to exactly max_tokens, finishing length", async () => {
      const plain = first(await postJson(completions, prompted({ seed: 1, max_tokens: 60 })));
      expect(plain.finish_reason).toBe("stop");
      expect(plain.token_ids.length).toBeLessThan(60);
      const { body } = await postJson(
        completions,
        prompted({ seed: 1, max_tokens: 60, ignore_eos: true }),
      );
      expect(body.choices[0].finish_reason).toBe("length");
      expect(body.choices[0].token_ids).toHaveLength(60);
      expect(body.choices[0].token_ids).not.toContain(plain.token_ids.at(-1));
      expect(body.usage.completion_tokens).toBe(60);
    });

    it("streams exactly max_tokens completion tokens under ignore_eos, the last chunk finishing length", async () => {
      const request = prompted({ seed: 1, max_tokens: 60, ignore_eos: true });
      const whole = first(await postJson(completions, request));
      const chunks = jsonChunks(
        await postSse(completions, {
          ...request,
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      const own = chunks.filter((chunk) => chunk.choices.length > 0).map((c) => c.choices[0]);
      expect(own.flatMap((c) => c.token_ids)).toEqual(whole.token_ids);
      expect(own.flatMap((c) => c.token_ids)).toHaveLength(60);
      expect(own.map((c) => c.text).join("")).toBe(whole.text);
      expect(own.at(-1).finish_reason).toBe("length");
      expect(own.slice(0, -1).every((c) => c.finish_reason === null)).toBe(true);
      expect(chunks.at(-1).usage.completion_tokens).toBe(60);
    });
  });

  describe("min_tokens", () => {
    it("keeps a chat answer that would end at EOS going to at least min_tokens", async () => {
      const plain = first(await postJson(chat, asked({ seed: 1 })));
      const eos = plain.token_ids.at(-1);
      const minTokens = plain.token_ids.length + 10;
      const forced = first(await postJson(chat, asked({ seed: 1, min_tokens: minTokens })));
      expect(forced.token_ids.length).toBeGreaterThanOrEqual(minTokens);
      expect(forced.token_ids.slice(0, minTokens)).not.toContain(eos);
      // The body is what the model wrote before; only its EOS was held off.
      expect(forced.token_ids.slice(0, plain.token_ids.length - 1)).toEqual(
        plain.token_ids.slice(0, -1),
      );
    });

    it("keeps a completion that would end at EOS going to at least min_tokens", async () => {
      const request = prompted({ seed: 1, max_tokens: 100 });
      const plain = first(await postJson(completions, request));
      expect(plain.finish_reason).toBe("stop");
      const eos = plain.token_ids.at(-1);
      const minTokens = plain.token_ids.length + 10;
      const forced = first(await postJson(completions, { ...request, min_tokens: minTokens }));
      expect(forced.token_ids.length).toBeGreaterThanOrEqual(minTokens);
      expect(forced.token_ids.slice(0, minTokens)).not.toContain(eos);
      expect(forced.text.startsWith(plain.text)).toBe(true);
      expect(forced.text.length).toBeGreaterThan(plain.text.length);
    });

    it("refuses chat min_tokens above max_tokens with a 400 naming min_tokens", async () => {
      const { status, body } = await postJson(chat, asked({ max_tokens: 10, min_tokens: 20 }));
      expect(status).toBe(400);
      expect(body.error.param).toBe("min_tokens");
      expect(body.error.message).toContain("min_tokens");
      expect((await postJson(chat, asked({ max_tokens: 10, min_tokens: 10 }))).status).toBe(200);
    });

    it("refuses completions min_tokens above max_tokens with a 400 naming min_tokens", async () => {
      const { status, body } = await postJson(
        completions,
        prompted({ max_tokens: 10, min_tokens: 20 }),
      );
      expect(status).toBe(400);
      expect(body.error.param).toBe("min_tokens");
      expect(body.error.message).toContain("min_tokens");
      const equal = await postJson(completions, prompted({ max_tokens: 10, min_tokens: 10 }));
      expect(equal.status).toBe(200);
    });
  });

  describe("stop", () => {
    it("cuts a chat answer before the stop string, names it as stop_reason, and streams the same text", async () => {
      const full = first(await postJson(chat, asked({ seed: 1 }))).message.content as string;
      // Two words, so two tokens: the stream must hold back the first until the match fails.
      const stop = full.split(" ").slice(3, 5).join(" ");
      const at = full.indexOf(stop);
      expect(at).toBeGreaterThan(0);
      const cut = first(await postJson(chat, asked({ seed: 1, stop })));
      expect(cut.message.content).toBe(full.slice(0, at));
      expect(cut.finish_reason).toBe("stop");
      expect(cut.stop_reason).toBe(stop);
      const kept = first(
        await postJson(chat, asked({ seed: 1, stop, include_stop_str_in_output: true })),
      );
      expect(kept.message.content).toBe(full.slice(0, at + stop.length));
      const chunks = jsonChunks(
        await postSse(chat, asked({ seed: 1, stop: [stop], stream: true })),
      );
      const own = chunks.map((chunk) => chunk.choices[0]);
      expect(own.map((c) => c.delta.content ?? "").join("")).toBe(cut.message.content);
      expect(own.at(-1)).toMatchObject({ finish_reason: "stop", stop_reason: stop });
    });

    it("cuts a completion before the stop string, names it as stop_reason, and streams the same text", async () => {
      const request = prompted({ seed: 1, max_tokens: 100 });
      const full = first(await postJson(completions, request)).text as string;
      const stop = full.split(" ").slice(1, 3).join(" ");
      const at = full.indexOf(stop);
      expect(at).toBeGreaterThan(0);
      const cut = first(await postJson(completions, { ...request, stop }));
      expect(cut).toMatchObject({
        text: full.slice(0, at),
        finish_reason: "stop",
        stop_reason: stop,
      });
      const kept = first(
        await postJson(completions, { ...request, stop, include_stop_str_in_output: true }),
      );
      expect(kept.text).toBe(full.slice(0, at + stop.length));
      const chunks = jsonChunks(await postSse(completions, { ...request, stop, stream: true }));
      expect(chunks.map((chunk) => chunk.choices[0].text).join("")).toBe(cut.text);
      expect(chunks.at(-1).choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: stop });
    });
  });

  describe("stop_token_ids", () => {
    it("ends a chat answer right after a stop token id, with the id as stop_reason", async () => {
      const ids: number[] = first(await postJson(chat, asked({}), KEY)).token_ids;
      const id = ids[4]!;
      const upTo = ids.indexOf(id) + 1;
      expect(upTo).toBeLessThan(ids.length);
      const stopped = first(await postJson(chat, asked({ stop_token_ids: [id] }), KEY));
      expect(stopped.finish_reason).toBe("stop");
      expect(stopped.stop_reason).toBe(id);
      expect(stopped.token_ids).toEqual(ids.slice(0, upTo));
      expect(stopped.token_ids.at(-1)).toBe(id);
      // The stopping token's own text is left out (vLLM's detokenizer), unless asked for.
      const before = ids
        .slice(0, upTo - 1)
        .map((t) => tokenText(toy, t))
        .join("");
      expect(stopped.message.content).toBe(before);
      const kept = first(
        await postJson(
          chat,
          asked({ stop_token_ids: [id], include_stop_str_in_output: true }),
          KEY,
        ),
      );
      expect(kept.message.content).toBe(before + tokenText(toy, id));
    });

    it("ends a completion right after a stop token id, with the id as stop_reason", async () => {
      const request = prompted({ max_tokens: 100 });
      const ids: number[] = first(await postJson(completions, request, KEY)).token_ids;
      const id = ids[3]!;
      const upTo = ids.indexOf(id) + 1;
      expect(upTo).toBeLessThan(ids.length);
      const stopped = first(await postJson(completions, { ...request, stop_token_ids: [id] }, KEY));
      expect(stopped.finish_reason).toBe("stop");
      expect(stopped.stop_reason).toBe(id);
      expect(stopped.token_ids).toEqual(ids.slice(0, upTo));
      expect(stopped.token_ids.at(-1)).toBe(id);
    });
  });

  describe("max_tokens", () => {
    it("caps a chat answer at max_tokens, and at max_completion_tokens over max_tokens, finishing length", async () => {
      const capped = await postJson(chat, asked({ seed: 1, max_tokens: 5 }));
      expect(first(capped).finish_reason).toBe("length");
      expect(first(capped).token_ids).toHaveLength(5);
      expect(capped.body.usage.completion_tokens).toBe(5);
      const completion = first(
        await postJson(chat, asked({ seed: 1, max_completion_tokens: 7, max_tokens: 20 })),
      );
      expect(completion.finish_reason).toBe("length");
      expect(completion.token_ids).toHaveLength(7);
      expect(completion.token_ids.slice(0, 5)).toEqual(first(capped).token_ids);
    });

    it("caps a completion at max_tokens, finishing length", async () => {
      const capped = await postJson(completions, prompted({ seed: 1, max_tokens: 5 }));
      expect(first(capped).finish_reason).toBe("length");
      expect(first(capped).token_ids).toHaveLength(5);
      expect(capped.body.usage.completion_tokens).toBe(5);
      // vLLM's completions default is 16 tokens: a longer answer stops there.
      const full = first(await postJson(completions, prompted({ seed: 3, max_tokens: 200 })));
      expect(full.token_ids.length).toBeGreaterThan(16);
      const unset = first(await postJson(completions, prompted({ seed: 3 })));
      expect(unset.finish_reason).toBe("length");
      expect(unset.token_ids).toEqual(full.token_ids.slice(0, 16));
    });
  });

  describe("temperature and seed", () => {
    it("answers the same chat tokens at temperature 0, and the same for a repeated seed", async () => {
      const ids = async (extra: Record<string, unknown>) =>
        first(await postJson(chat, asked(extra))).token_ids as number[];
      expect(await ids({ temperature: 0 })).toEqual(await ids({ temperature: 0 }));
      const seeded = await ids({ seed: 11 });
      expect(await ids({ seed: 11 })).toEqual(seeded);
      // Without temperature 0 or a seed, answers vary; the seed is what pins them.
      expect(await ids({ seed: 12 })).not.toEqual(seeded);
      expect(await ids({})).not.toEqual(await ids({}));
    });

    it("answers the same completion tokens at temperature 0, and the same for a repeated seed", async () => {
      const ids = async (extra: Record<string, unknown>) =>
        first(await postJson(completions, prompted({ max_tokens: 30, ...extra })))
          .token_ids as number[];
      expect(await ids({ temperature: 0 })).toEqual(await ids({ temperature: 0 }));
      const seeded = await ids({ seed: 11 });
      expect(await ids({ seed: 11 })).toEqual(seeded);
      expect(await ids({ seed: 12 })).not.toEqual(seeded);
      expect(await ids({})).not.toEqual(await ids({}));
    });
  });

  describe("logprobs", () => {
    it("gives a chat logprobs entry per token, with top_logprobs of the asked length led by the sampled token", async () => {
      const choice = first(
        await postJson(chat, asked({ seed: 1, logprobs: true, top_logprobs: 3 })),
      );
      const content = choice.logprobs.content;
      expect(content).toHaveLength(choice.token_ids.length);
      content.forEach((entry: any, i: number) => {
        expect(entry.token).toBe(tokenText(toy, choice.token_ids[i]));
        expect(entry.logprob).toBeLessThanOrEqual(0);
        expect(entry.top_logprobs).toHaveLength(3);
        expect(entry.top_logprobs[0]).toEqual({
          token: entry.token,
          logprob: entry.logprob,
          bytes: entry.bytes,
        });
      });
      const without = first(await postJson(chat, asked({ seed: 1, logprobs: true })));
      expect(without.logprobs.content.every((e: any) => e.top_logprobs.length === 0)).toBe(true);
    });

    it("gives completions token_logprobs per token and top_logprobs of at most logprobs entries", async () => {
      const choice = first(await postJson(completions, prompted({ seed: 1, logprobs: 2 })));
      const { tokens, token_logprobs, top_logprobs, text_offset } = choice.logprobs;
      const n = choice.token_ids.length;
      expect([tokens, token_logprobs, top_logprobs, text_offset].map((a) => a.length)).toEqual([
        n,
        n,
        n,
        n,
      ]);
      tokens.forEach((token: string, i: number) => {
        expect(token).toBe(tokenText(toy, choice.token_ids[i]));
        expect(typeof token_logprobs[i]).toBe("number");
        // vLLM lists the sampled token and the top `logprobs` (logprobs + 1 entries when the
        // sampled one is not among them); the scripted model always samples its most likely token.
        const top = Object.keys(top_logprobs[i]);
        expect(top.length).toBeGreaterThanOrEqual(1);
        expect(top.length).toBeLessThanOrEqual(2);
        expect(top_logprobs[i][token]).toBe(token_logprobs[i]);
      });
      expect(text_offset[0]).toBe(0);
    });
  });
});
