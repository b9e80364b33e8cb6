/**
 * @module The guess-the-number environment of the stepwise example: a secret (the task's ground
 * truth) in a range; each step takes one guess and narrows the range. Its state is snapshotted
 * after every step and restored on resume, so a rollout can move between driver invocations.
 */
import { z } from "zod";
import {
  type AgentTask,
  BaseEnv,
  type EnvReset,
  type EnvStepResult,
  type JsonObject,
  type JsonValue,
} from "../../src/sdk";

/** What the agent observes: feedback on the last guess and the range still possible. */
export interface GuessObservation {
  feedback: string;
  low: number;
  high: number;
  guesses_left: number;
}

/** The env's whole state: what `snapshot()` returns and `restore()` takes. */
const GuessState = z.object({ low: z.int(), high: z.int(), guesses: z.int().min(0) });
type GuessState = z.infer<typeof GuessState>;

/** The task's knobs (`task.extra_args`). */
const GuessTask = z.object({
  low: z.int().default(1),
  high: z.int().default(100),
  max_guesses: z.int().min(1).default(10),
});

/**
 * Reward 1 and done on the right guess; done with reward 0 when the guesses run out. A guess
 * outside the range (or no number at all) costs a guess and changes nothing else.
 */
export class GuessEnv extends BaseEnv {
  readonly #secret: number;
  readonly #start: { low: number; high: number };
  readonly #maxGuesses: number;
  #state: GuessState;
  /** How this instance got its state, reported in each step's info: by `reset`, or by `restore` on resume. */
  #rebuiltBy: "reset" | "restore" = "reset";

  constructor(task: AgentTask) {
    super();
    const knobs = GuessTask.parse(task.extra_args);
    this.#secret = Number(task.ground_truth);
    if (!Number.isInteger(this.#secret) || this.#secret < knobs.low || this.#secret > knobs.high)
      throw new TypeError(`ground_truth must be a whole number in [${knobs.low}, ${knobs.high}]`);
    this.#start = { low: knobs.low, high: knobs.high };
    this.#maxGuesses = knobs.max_guesses;
    this.#state = { ...this.#start, guesses: 0 };
  }

  static fromDict(info: JsonObject): GuessEnv {
    return new GuessEnv(info.task as unknown as AgentTask);
  }

  reset(): EnvReset {
    this.#state = { ...this.#start, guesses: 0 };
    this.#rebuiltBy = "reset";
    return [this.#observe("I picked a whole number."), {}];
  }

  step(action: JsonValue): EnvStepResult {
    const state = this.#state;
    state.guesses += 1;
    const guess = typeof action === "number" && Number.isInteger(action) ? action : null;
    const info = { guess, guesses: state.guesses, rebuilt_by: this.#rebuiltBy };
    if (guess === this.#secret) return [this.#observe(`Correct, it is ${guess}.`), 1, true, info];
    let feedback: string;
    if (guess === null || guess < state.low || guess > state.high)
      feedback = `That is not a whole number from ${state.low} to ${state.high}.`;
    else if (guess < this.#secret) [state.low, feedback] = [guess + 1, "Higher."];
    else [state.high, feedback] = [guess - 1, "Lower."];
    if (state.guesses >= this.#maxGuesses)
      return [this.#observe(`${feedback} No guesses left.`), 0, true, info];
    return [this.#observe(feedback), 0, false, info];
  }

  override snapshot(): JsonValue {
    return { ...this.#state };
  }

  override restore(snapshot: JsonValue): void {
    this.#state = GuessState.parse(snapshot);
    this.#rebuiltBy = "restore";
  }

  #observe(feedback: string): JsonValue {
    const observation: GuessObservation = {
      feedback,
      low: this.#state.low,
      high: this.#state.high,
      guesses_left: this.#maxGuesses - this.#state.guesses,
    };
    return { ...observation };
  }
}
