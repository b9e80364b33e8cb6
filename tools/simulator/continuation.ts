/**
 * @module Resuming an interrupted generation from token ids, as a partial-rollout client does after
 * a weight sync: the prompt is the chat prompt (ending `<|im_start|>assistant\n`) plus the ids
 * generated so far. The simulator remembers the seed of every generation a closed connection
 * aborted, so the resumed call continues the same script at the same positions (each position's
 * token and logprob are functions of the choice's seed and the position), and only the logprobs
 * tell which weights version produced it.
 */
import { hashParts } from "./rng";
import type { SimTokenizer } from "./sim-tokenizer";

/** Aborted generations remembered for resumption; the oldest are forgotten first. */
const MAX_REMEMBERED = 8192;

/** A prompt cut where the open assistant turn starts. */
export interface Continuation {
  /** The prompt up to and including `<|im_start|>assistant\n` (all of it when no turn is open). */
  base: number[];
  /** The open assistant turn's ids so far (empty for an ordinary prompt). */
  prefix: number[];
}

/** Splits `promptIds` after its last `<|im_start|>assistant\n` when that turn has not ended. */
export function splitContinuation(
  tokenizer: SimTokenizer,
  promptIds: readonly number[],
): Continuation {
  const header = tokenizer.assistantHeader;
  for (let i = promptIds.length - header.length; i >= 0; i--) {
    if (promptIds[i] === tokenizer.eosTokenId) break;
    if (header.every((id, k) => promptIds[i + k] === id)) {
      const end = i + header.length;
      return { base: promptIds.slice(0, end), prefix: promptIds.slice(end) };
    }
  }
  return { base: [...promptIds], prefix: [] };
}

interface Remembered {
  seed: number;
  produced: number[];
}

/** Seeds of aborted generations, found again by their prompt and a prefix of what they produced. */
export class InterruptedGenerations {
  readonly #byBase = new Map<number, Remembered[]>();
  readonly #order: Array<[number, Remembered]> = [];

  /** Remembers that the choice seeded `seed` on `base` had produced `produced` when it was aborted. */
  record(base: readonly number[], seed: number, produced: readonly number[]): void {
    if (produced.length === 0) return;
    const key = hashParts(base);
    const entry = { seed, produced: [...produced] };
    const list = this.#byBase.get(key) ?? [];
    list.push(entry);
    this.#byBase.set(key, list);
    this.#order.push([key, entry]);
    if (this.#order.length > MAX_REMEMBERED)
      this.#forget(...(this.#order.shift() as [number, Remembered]));
  }

  /**
   * The seed of an aborted generation on `base` whose output starts with `prefix`, taken (so two
   * samples of one prompt that wrote the same words resume as two); undefined when none matches.
   */
  take(base: readonly number[], prefix: readonly number[]): number | undefined {
    const key = hashParts(base);
    const list = this.#byBase.get(key);
    const entry = list?.find(
      (item) =>
        item.produced.length >= prefix.length && prefix.every((id, i) => item.produced[i] === id),
    );
    if (!entry) return undefined;
    this.#forget(key, entry);
    const at = this.#order.findIndex(([, item]) => item === entry);
    if (at >= 0) this.#order.splice(at, 1);
    return entry.seed;
  }

  #forget(key: number, entry: Remembered): void {
    const list = this.#byBase.get(key);
    if (!list) return;
    const rest = list.filter((item) => item !== entry);
    if (rest.length === 0) this.#byBase.delete(key);
    else this.#byBase.set(key, rest);
  }
}

/** The seed of a choice's logprobs under weights `version` (version 0 keeps the script's own seed). */
export function logprobSeed(scriptSeed: number, version: number): number {
  return version === 0 ? scriptSeed : hashParts(scriptSeed, "version", version);
}
