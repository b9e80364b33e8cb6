/**
 * @module The scripted answer of one choice with the server-wide shaping applied: the prompt's own
 * success rate (per-prompt difficulty) and a heavy-tailed filler preamble (response-length tail).
 * Both draw from their own seeded streams, so a server without them answers exactly as before.
 * An agent harness's request for a known task gets the harness script's answer (harness-script.ts).
 */
import { type HarnessFields, harnessAnswer } from "./harness-script";
import type { SimulatorConfig, TailOptions } from "./options";
import { type ScriptInput, type ScriptAnswer, scriptedAnswer } from "./scripted-answers";
import { type Rng, createRng, hashParts } from "./rng";
import { tokenizerFor } from "./tokenizer-registry";

const PREAMBLE_WORDS = [
  "first",
  "we",
  "note",
  "that",
  "the",
  "step",
  "gives",
  "a",
  "value",
  "and",
  "then",
  "check",
  "it",
  "again",
  "so",
  "this",
  "holds",
  "for",
  "each",
  "case",
];

/** A Gamma(shape, 1) draw (Marsaglia–Tsang; shapes below 1 boosted by u^(1/shape)). */
function gamma(shape: number, rng: Rng): number {
  if (shape < 1) return gamma(shape + 1, rng) * Math.pow(rng.next() || Number.MIN_VALUE, 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = normal(rng);
    const v = (1 + c * x) ** 3;
    if (v <= 0) continue;
    const u = rng.next() || Number.MIN_VALUE;
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

function normal(rng: Rng): number {
  const u = rng.next() || Number.MIN_VALUE;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

/**
 * The success rate of the prompt whose last user turn is `question`: `successRate` itself, or
 * with `difficulty` κ a Beta(κp, κ(1−p)) draw seeded by (server seed, question), the same for every
 * sample of the prompt.
 */
export function promptSuccessRate(
  config: Pick<SimulatorConfig, "seed" | "successRate" | "difficulty">,
  question: string,
): number {
  const p = config.successRate;
  if (config.difficulty === null || p <= 0 || p >= 1) return p;
  const rng = createRng(hashParts(config.seed, "difficulty", question));
  const a = gamma(config.difficulty * p, rng);
  const b = gamma(config.difficulty * (1 - p), rng);
  return a + b === 0 ? p : a / (a + b);
}

/** The preamble length in tokens drawn for the choice seeded `seed` under `tail`. */
export function tailTokens(tail: TailOptions, seed: number): number {
  const rng = createRng(hashParts(seed, "tail"));
  const scale = tail.scaleTokens ?? 64;
  const u = 1 - rng.next(); // (0, 1]
  const drawn =
    tail.distribution === "pareto"
      ? scale / Math.pow(u, 1 / (tail.shape ?? 1.5))
      : scale * Math.exp((tail.shape ?? 1) * normal(rng));
  return Math.max(1, Math.min(tail.maxTokens ?? 8192, Math.round(drawn)));
}

/** Filler text of about `tokens` tokens (whole words, so it never ends mid-word). */
function preamble(tokens: number, seed: number, encode: (text: string) => number[]): string {
  const rng = createRng(hashParts(seed, "preamble"));
  const words: string[] = [];
  let count = 0;
  while (count < tokens) {
    const word = rng.pick(PREAMBLE_WORDS);
    words.push(word);
    count += encode(` ${word}`).length;
  }
  return `${words.join(" ")}.\n`;
}

/** What the script is asked: the conversation and its tools, and what a harness answer also reads. */
export type ScriptRequest = Omit<ScriptInput, "rng" | "successRate"> & HarnessFields;

function lastUserTurn(input: ScriptRequest): string {
  for (let i = input.turns.length - 1; i >= 0; i--)
    if (input.turns[i]?.role === "user") return input.turns[i]!.content;
  return "";
}

/** The settings the script reads: its seed, success rates, difficulty, tail, tokenizer and harness tasks. */
export type ScriptConfig = Pick<
  SimulatorConfig,
  | "seed"
  | "successRate"
  | "difficulty"
  | "tail"
  | "tokenizer"
  | "harnessTasks"
  | "harnessSuccessRate"
>;

/** What the scripted model writes for the choice seeded `seed`, shaped by `config`'s difficulty and tail. */
export function scriptedOutput(
  input: ScriptRequest,
  config: ScriptConfig,
  seed: number,
): ScriptAnswer {
  // A harness's outcome is its rollout's (keyed by sample and task), not this choice's seed's.
  const harness = harnessAnswer(input, config);
  if (harness !== undefined) return harness;
  const { tools: _tools, sampleKey: _key, openTurn: _open, ...asked } = input;
  const output = scriptedAnswer({
    ...asked,
    successRate: promptSuccessRate(config, lastUserTurn(input)),
    rng: createRng(seed),
  });
  if (config.tail === null || output.toolCalls.length > 0) return output;
  // The preamble goes after a think block (so a reasoning parser still finds it at the start).
  const think = /^<think>[\s\S]*?<\/think>\n?/.exec(output.content)?.[0] ?? "";
  return {
    ...output,
    content:
      think +
      preamble(tailTokens(config.tail, seed), seed, tokenizerFor(config.tokenizer).encode) +
      output.content.slice(think.length),
  };
}
