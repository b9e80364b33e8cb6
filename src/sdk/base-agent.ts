/** @module The agent side of the seed's BaseAgent/BaseEnv pair. */
import type { Action } from "../schemas/action";
import type { ChatMessage, ToolDefinition } from "../schemas/chat";
import type { JsonObject, JsonValue } from "../schemas/json";
import type { StepInput } from "../schemas/step";
import type { ModelResponse } from "./model-response";

/**
 * An agent turns observations into chat messages and model responses into actions. The driver
 * rebuilds it on every invocation by replaying the committed observations and model responses
 * (no model calls), so both update methods must be deterministic for the same inputs.
 *
 * @example
 * class Echo extends BaseAgent {
 *   #messages: ChatMessage[] = [];
 *   get chatCompletions() { return this.#messages; }
 *   updateFromEnv(observation: JsonValue) { this.#messages.push({ role: "user", content: String(observation) }); }
 *   updateFromModel(response: ModelResponse) { this.#messages.push(response.message); return { action: response.text }; }
 *   reset() { this.#messages = []; }
 * }
 */
export abstract class BaseAgent {
  #steps: StepInput[] = [];

  /** The messages to send to the model for the next call (the whole conversation so far). */
  abstract get chatCompletions(): ChatMessage[];
  /** Takes what the environment returned (reset's observation has reward 0 and done false). */
  abstract updateFromEnv(
    observation: JsonValue,
    reward: number,
    done: boolean,
    info: JsonObject,
  ): void | Promise<void>;
  /** Takes the model's response and decides the action to send to the environment. */
  abstract updateFromModel(response: ModelResponse): Action | Promise<Action>;
  /** Clears all state for a new episode. */
  abstract reset(): void | Promise<void>;

  /** Tools offered to the model on every call. Default: none. */
  get tools(): ToolDefinition[] {
    return [];
  }

  /** Steps this agent chose to record itself (optional; the driver records its own). */
  get trajectory(): { steps: StepInput[] } {
    return { steps: this.#steps };
  }

  /** The most recent step the agent recorded, if any (the seed's `get_current_state`). */
  getCurrentState(): StepInput | undefined {
    return this.#steps.at(-1);
  }
}

/** A constructor of agents from the registered `agentArgs`. */
export type AgentClass<A extends BaseAgent = BaseAgent> = new (args: JsonObject) => A;
