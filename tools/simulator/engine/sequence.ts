/**
 * @module One sequence in the engine: the tokens it has generated with their log-probs, and the
 * stop checks vLLM runs after every token. The scheduler's `check_stop`
 * (vllm/v1/core/sched/utils.py): once `min_tokens` are out, EOS (unless `ignore_eos`) or a
 * `stop_token_ids` entry (its id becomes the stop reason) stops it, else max_tokens or the
 * context window caps its length (a last token that is EOS finishes "stop", as a one-token
 * prefill leg that samples EOS shows; docs/vllm.md); the output processor's detokenizer then
 * checks stop strings in the new text once past `min_tokens`, and a stop string found overrides
 * a length cap.
 */
import type { TokenChoice } from "../logprobs";
import { type SimTokenizer, createUtf8Decoder } from "../sim-tokenizer";

/** The sampling parameters the engine and the token source act on. */
export interface SamplingParams {
  /** Most tokens to generate (max_tokens, or the free context). */
  maxTokens: number;
  /** EOS and `stopTokenIds` cannot end the sequence before this many tokens (the source masks them). */
  minTokens: number;
  /** EOS does not end the sequence (the source keeps generating). */
  ignoreEos: boolean;
  /** Stop strings, checked in the new text. */
  stop: readonly string[];
  /** Token ids that end the sequence; the id is the stop reason. */
  stopTokenIds: readonly number[];
  /** Keep the stop string in the text (vLLM's `include_stop_str_in_output`). */
  includeStopStr: boolean;
  /** Alternatives to report per token (0: the sampled token's log-prob only). */
  topLogprobs: number;
  temperature: number;
  topP: number;
  topK: number;
  /** The request's `seed`, or null. */
  seed: number | null;
}

/** Why a sequence ended. */
export type FinishReason = "stop" | "length" | "abort";

/** One token as the engine hands it to the wire layer. */
export interface TokenEvent {
  /** Index of the token among the sequence's generated tokens. */
  position: number;
  id: number;
  /** The sampled token first, then the alternatives asked for. */
  choices: TokenChoice[];
  /** Text the token adds to the output (empty for control tokens and cut-off tails). */
  textDelta: string;
  /** Text its streamed chunk may carry (stop-string hold-back applied). */
  streamDelta: string;
  /** Set on the last token. */
  finished: { reason: Exclude<FinishReason, "abort">; stopReason: string | number | null } | null;
}

/** A finished (or aborted) sequence, in the shape the wire layer answers from. */
export interface Generation {
  /** Generated ids (ends with EOS when EOS stopped it). */
  tokenIds: number[];
  /** Per generated token: the sampled token's log-prob first, then alternatives. */
  logprobs: TokenChoice[][];
  finishReason: FinishReason;
  /** The stop string or stop token id that ended it; null for EOS and length. */
  stopReason: string | number | null;
  /** Output text without control tokens, cut at a stop string. */
  text: string;
  /** Text each token adds to `text`. */
  textDeltas: string[];
  /** Text each token's chunk carried when streamed. */
  streamDeltas: string[];
}

/**
 * vLLM's check_stop_strings: in the order given, the first stop string the text added since
 * `before` completes (the search starts `len(stop) - 1` characters before the new text).
 */
function findStop(
  text: string,
  before: number,
  stop: readonly string[],
): { index: number; stop: string } | undefined {
  for (const s of stop) {
    if (s === "") continue;
    const index = text.indexOf(s, Math.max(0, before - s.length + 1));
    if (index >= 0) return { index, stop: s };
  }
  return undefined;
}

/** Cuts `deltas` so that together they hold `length` characters. */
function clipDeltas(deltas: string[], length: number): void {
  let remaining = length;
  for (let i = 0; i < deltas.length; i++) {
    const delta = deltas[i]!;
    deltas[i] = delta.slice(0, Math.max(0, remaining));
    remaining -= delta.length;
  }
}

/** The generated part of one sequence and the checks that end it. */
export class SequenceOutput {
  readonly ids: number[] = [];
  readonly logprobs: TokenChoice[][] = [];
  readonly textDeltas: string[] = [];
  readonly streamDeltas: string[] = [];
  finishReason: FinishReason | null = null;
  stopReason: string | number | null = null;
  readonly #tokenizer: SimTokenizer;
  readonly #params: SamplingParams;
  readonly #contextLeft: number;
  readonly #decoder = createUtf8Decoder();
  readonly #hold: number;
  #text = "";
  #sent = 0;
  #cut: number | undefined;

  /** `contextLeft`: tokens the context window still has after the prompt. */
  constructor(tokenizer: SimTokenizer, params: SamplingParams, contextLeft: number) {
    this.#tokenizer = tokenizer;
    this.#params = params;
    this.#contextLeft = contextLeft;
    // vLLM's stop buffer holds back the last `longest stop - 1` characters until the output is
    // known not to end in a stop string (detokenizer.py, get_next_output_text).
    this.#hold =
      params.stop.length > 0 && !params.includeStopStr
        ? Math.max(...params.stop.map((s) => s.length)) - 1
        : 0;
  }

  /** Appends one sampled token and runs the stop checks; answers what to send for it. */
  append(id: number, choices: TokenChoice[]): TokenEvent {
    const position = this.ids.length;
    this.ids.push(id);
    this.logprobs.push(choices);
    const params = this.#params;
    const tokenizer = this.#tokenizer;
    const count = this.ids.length;
    let finished: TokenEvent["finished"] = null;
    if (count >= params.minTokens) {
      if (!params.ignoreEos && id === tokenizer.eosTokenId)
        finished = { reason: "stop", stopReason: null };
      else if (params.stopTokenIds.includes(id)) finished = { reason: "stop", stopReason: id };
    }
    // vLLM's detokenizer leaves out the text of the token that stopped the sequence (EOS or a stop
    // token id) unless include_stop_str_in_output asks for it.
    const silent =
      tokenizer.controlTokenIds.has(id) || (finished !== null && !params.includeStopStr);
    const delta = silent ? "" : this.#decoder.decode(tokenizer.tokenBytes(id), { stream: true });
    const before = this.#text.length;
    this.#text += delta;
    if (!finished && (count >= params.maxTokens || count >= this.#contextLeft))
      finished = { reason: "length", stopReason: null };
    if (delta !== "" && params.stop.length > 0 && count > params.minTokens) {
      const hit = findStop(this.#text, before, params.stop);
      if (hit) {
        finished = { reason: "stop", stopReason: hit.stop };
        this.#cut = params.includeStopStr ? hit.index + hit.stop.length : hit.index;
      }
    }

    let textDelta = delta;
    let streamDelta = delta;
    if (finished) {
      this.#text += this.#decoder.decode(); // a dangling partial character decodes as U+FFFD
      const text = this.text;
      textDelta = this.#text.slice(before);
      streamDelta = text.slice(this.#sent);
      this.#sent = text.length;
      this.finishReason = finished.reason;
      this.stopReason = finished.stopReason;
    } else if (this.#hold > 0) {
      const upTo = Math.max(this.#sent, this.#text.length - this.#hold);
      streamDelta = this.#text.slice(this.#sent, upTo);
      this.#sent = upTo;
    } else {
      this.#sent = this.#text.length;
    }
    this.textDeltas.push(textDelta);
    this.streamDeltas.push(streamDelta);
    if (this.#cut !== undefined) clipDeltas(this.textDeltas, this.#cut);
    return { position, id, choices, textDelta: this.textDeltas[position]!, streamDelta, finished };
  }

  /** Marks the output aborted (the client left, or the server closed). */
  abort(): void {
    if (this.finishReason === null) this.finishReason = "abort";
  }

  /** The output text so far, cut at a stop string. */
  get text(): string {
    return this.#cut === undefined ? this.#text : this.#text.slice(0, this.#cut);
  }

  /** The output as the wire layer answers from it. */
  generation(): Generation {
    return {
      tokenIds: this.ids,
      logprobs: this.logprobs,
      finishReason: this.finishReason ?? "abort",
      stopReason: this.stopReason,
      text: this.text,
      textDeltas: this.textDeltas,
      streamDeltas: this.streamDeltas,
    };
  }
}
