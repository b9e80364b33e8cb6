/**
 * @module The guess-the-number agent (AgentSDK style `BaseAgent`): keeps the chat, turns each
 * observation into a user turn and each answer's boxed number into a guess. Both update methods
 * are pure functions of their inputs, so the driver can rebuild the agent by replaying them.
 */
import { extractBoxed } from "../../src/agents/grading";
import {
  type Action,
  BaseAgent,
  type ChatMessage,
  type JsonValue,
  type ModelResponse,
} from "../../src/sdk";
import type { GuessObservation } from "./guess-env";

/** The instructions the model gets. */
export const GUESS_SYSTEM_PROMPT =
  "We play guess the number. After each guess you hear Higher or Lower. Reply with your next guess in \\boxed{}.";

/** The guess in the answer's last `\boxed{}`, rounded down; null when there is none. */
export function parseGuess(text: string): number | null {
  const value = Number(extractBoxed(text) ?? Number.NaN);
  return Number.isFinite(value) ? Math.floor(value) : null;
}

/** Keeps the whole chat; each action is the guess (or null when the answer has none). */
export class GuessAgent extends BaseAgent {
  #messages: ChatMessage[] = [];

  get chatCompletions(): ChatMessage[] {
    return this.#messages;
  }

  reset(): void {
    this.#messages = [{ role: "system", content: GUESS_SYSTEM_PROMPT }];
  }

  updateFromEnv(observation: JsonValue): void {
    const { feedback, low, high, guesses_left } = observation as unknown as GuessObservation;
    // The halving hint is written as arithmetic, which even the local simulator (it only computes) can follow.
    this.#messages.push({
      role: "user",
      content: `${feedback} The number is between ${low} and ${high}; ${guesses_left} guesses left. Halving the range means guessing (${low} + ${high}) / 2.`,
    });
  }

  updateFromModel(response: ModelResponse): Action {
    this.#messages.push(response.message);
    return { action: parseGuess(response.text) };
  }
}
