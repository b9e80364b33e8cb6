/**
 * @module A token source in another process: an engine holding a real model (issue 49's PyTorch
 * policy) answers each step's tokens over a small HTTP protocol, as vLLM's frontend hands each
 * step to its engine core. Stateless per step: every call carries each sequence's prompt and
 * generated ids, so preemption, aborts and restarts need no protocol of their own (an engine may
 * still cache by `seq_id`). The protocol (docs/vllm.md, "Token sources"):
 *
 * - `POST /step` `{sequences: [{seq_id, key, prompt_ids, output_ids, sampling}]}` →
 *   `{tokens: [{id, logprob, top?: [{id, logprob}]}], weight_version}`, one token per sequence in order;
 * - `GET /weights` → `{weight_version}`;
 * - `POST /weights/load` `{path, weight_version}` → `{weight_version}`, or 4xx `{error}` with the
 *   old weights still served.
 */
import { z } from "zod";
import type { TokenChoice } from "../logprobs";
import { isTokenId } from "../sim-tokenizer";
import type { SequenceView, TokenSource } from "./token-source";

const Choice = z.object({ id: z.int().min(0), logprob: z.number().max(0) });

/** The engine's answer to one step, validated before a token of it is used. */
export const StepReply = z.object({
  tokens: z.array(Choice.extend({ top: z.array(Choice).optional() })),
  weight_version: z.int().min(0).nullable().optional(),
});
export type StepReply = z.infer<typeof StepReply>;

/** The engine's weight version. */
export const WeightsReply = z.object({ weight_version: z.int().min(0) });

/** One sequence as the protocol sends it. */
function wireSequence(view: SequenceView): Record<string, unknown> {
  const { params } = view;
  return {
    seq_id: view.seqId,
    key: view.key,
    prompt_ids: view.promptIds,
    output_ids: view.outputIds,
    sampling: {
      temperature: params.temperature,
      top_p: params.topP,
      top_k: params.topK,
      seed: params.seed,
      min_tokens: params.minTokens,
      ignore_eos: params.ignoreEos,
      stop_token_ids: params.stopTokenIds,
      eos_token_id: view.tokenizer.eosTokenId,
      top_logprobs: params.topLogprobs,
    },
  };
}

async function readJson<S extends z.ZodType>(
  response: Response,
  schema: S,
  what: string,
): Promise<z.infer<S>> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} ${text.slice(0, 200)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${what}: not JSON: ${text.slice(0, 200)}`);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new Error(
      `${what}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return parsed.data;
}

/** The token source of the engine at `baseUrl` (e.g. `http://127.0.0.1:8100`). */
export function createExternalSource(baseUrl: string, fetcher: typeof fetch = fetch): TokenSource {
  const url = baseUrl.replace(/\/+$/, "");
  return {
    name: `external ${url}`,
    async next(batch) {
      const response = await fetcher(`${url}/step`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sequences: batch.map(wireSequence) }),
      });
      const reply = await readJson(response, StepReply, "token source /step");
      if (reply.tokens.length !== batch.length)
        throw new Error(
          `token source /step answered ${reply.tokens.length} tokens for ${batch.length} sequences`,
        );
      return reply.tokens.map((token, i): TokenChoice[] => {
        const { tokenizer, params } = batch[i]!;
        for (const id of [token.id, ...(token.top ?? []).map((alt) => alt.id)])
          if (!isTokenId(tokenizer, id))
            throw new Error(`token source /step: tokens.${i}: id ${id} is outside the vocabulary`);
        const wanted = params.topLogprobs;
        const top = (token.top ?? []).filter((alt) => alt.id !== token.id);
        return [{ id: token.id, logprob: token.logprob }, ...top.slice(0, Math.max(0, wanted - 1))];
      });
    },
    async loadWeights(path, version) {
      const response = await fetcher(`${url}/weights/load`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ path, weight_version: version }),
      });
      if (!response.ok) {
        const text = await response.text();
        let reason = text.slice(0, 500);
        try {
          reason = String((JSON.parse(text) as { error?: unknown }).error ?? reason);
        } catch {
          // Not JSON: the text itself says what went wrong.
        }
        throw new Error(reason);
      }
      return (await readJson(response, WeightsReply, "token source /weights/load")).weight_version;
    },
  };
}
