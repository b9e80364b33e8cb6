/**
 * @module The token source: what the engine asks, once per step and for every sequence that
 * samples in it, for the next token and its log-prob, as vLLM's scheduler hands one batch to its
 * model runner. The wire layer (tokenizer, template, parsers, errors, streaming) and the engine
 * (scheduling, KV cache, stop checks) stay the same whichever source answers: the scripted model
 * here, or an external engine process (external-token-source.ts). A source applies the sampling
 * parameters that act on logits (`min_tokens` and `ignore_eos` masks, temperature); the engine
 * applies those that end a sequence.
 */
import { type TokenChoice, tokenChoices } from "../logprobs";
import type { SimTokenizer } from "../sim-tokenizer";
import type { SamplingParams } from "./sequence";

/** What the scripted source writes for one sequence (decided by the wire layer from the request). */
export interface ScriptPlan {
  /** The tokens the script writes, before EOS. */
  bodyIds: readonly number[];
  /** Seed of its log-probs (the script's seed mixed with the weights version). */
  logprobSeed: number;
  /** Position of the first generated token in the assistant turn (a continued turn carries on). */
  positionOffset: number;
  /**
   * The whole turn's body, when `bodyIds` is what is left of it (a continued turn): a masked EOS
   * repeats the whole body by turn position, so a turn continued from token ids writes what the
   * uninterrupted turn would have. Default `bodyIds`.
   */
  turnBodyIds?: readonly number[];
}

/** One sequence as a source sees it in a step. */
export interface SequenceView {
  /** The engine's id for the sequence (stable while it lives; a source may cache by it). */
  readonly seqId: number;
  /** The sample key the request carried (`x-sample-key`), or null. */
  readonly key: string | null;
  readonly promptIds: readonly number[];
  /** Tokens generated so far. */
  readonly outputIds: readonly number[];
  readonly params: SamplingParams;
  /** The scripted answer, for the scripted source; other sources ignore it. */
  readonly script: ScriptPlan | null;
  readonly tokenizer: SimTokenizer;
}

/** A pluggable token source. */
export interface TokenSource {
  /** Its name in `/sim/stats` and bench output. */
  readonly name: string;
  /**
   * The next token of every sequence in `batch`, in order: the sampled token first with its
   * log-prob, then `params.topLogprobs` alternatives. May answer synchronously.
   */
  next(batch: readonly SequenceView[]): TokenChoice[][] | Promise<TokenChoice[][]>;
  /** The sequence ended (finished, aborted or preempted): state kept for it may go. */
  release?(seqId: number): void;
  /** Loads the weights at `path` as `version`, whole or not at all (throws saying why not). */
  loadWeights?(path: string, version: number): Promise<number>;
  /** Stops whatever it runs. */
  close?(): Promise<void>;
}

/** Whether `id` may not be sampled at output position `k` (vLLM's min_tokens and ignore_eos logit masks). */
export function isMasked(
  id: number,
  k: number,
  params: SamplingParams,
  eosTokenId: number,
): boolean {
  if (id === eosTokenId) return params.ignoreEos || k < params.minTokens;
  return k < params.minTokens && params.stopTokenIds.includes(id);
}

/**
 * The scripted source: each sequence writes its plan's body, then EOS. Where a mask forbids the
 * planned token (EOS before `min_tokens`, or at all under `ignore_eos`) it writes the body again
 * from the start (a space when the body is empty), so a long forced completion still decodes to
 * text. Log-probs are the seeded ones of logprobs.ts: a pure function of (seed, position, token).
 */
export function createScriptedSource(): TokenSource {
  return {
    name: "scripted",
    next(batch) {
      return batch.map((view) => {
        const { tokenizer, params } = view;
        const plan = view.script ?? { bodyIds: [], logprobSeed: 0, positionOffset: 0 };
        const k = view.outputIds.length;
        let id = k < plan.bodyIds.length ? plan.bodyIds[k]! : tokenizer.eosTokenId;
        if (isMasked(id, k, params, tokenizer.eosTokenId)) {
          const turn = plan.turnBodyIds ?? plan.bodyIds;
          const body = turn.length > 0 ? turn : tokenizer.encode(" ");
          id = body[(plan.turnBodyIds ? plan.positionOffset + k : k) % body.length]!;
        }
        return tokenChoices(
          tokenizer,
          plan.logprobSeed,
          plan.positionOffset + k,
          id,
          Math.max(1, params.topLogprobs),
        );
      });
    },
  };
}
