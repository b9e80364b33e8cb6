/** @module The environment side of the seed's BaseAgent/BaseEnv pair. */
import type { JsonObject, JsonValue } from "../schemas/json";

/** What `reset()` returns: the first observation and extra info. */
export type EnvReset = [observation: JsonValue, info: JsonObject];
/** What `step()` returns, as in the seed: `[observation, reward, done, info]`. */
export type EnvStepResult = [
  observation: JsonValue,
  reward: number,
  done: boolean,
  info: JsonObject,
];

/**
 * An environment the agent acts in. Environments are rebuilt on every driver invocation (the
 * driver is stateless), so a stateful environment either implements `snapshot()`/`restore()` or
 * is rebuilt by `reset()` followed by replaying the committed actions through `step()`; replay
 * requires `reset` and `step` to be deterministic for the same task and actions.
 *
 * @example
 * class Echo extends BaseEnv {
 *   static fromDict(info: JsonObject) { return new Echo(); }
 *   async reset(): Promise<EnvReset> { return ["say hi", {}]; }
 *   async step(action: JsonValue): Promise<EnvStepResult> { return ["", action === "hi" ? 1 : 0, true, {}]; }
 * }
 */
export abstract class BaseEnv {
  /** Starts an episode and returns the first observation. */
  abstract reset(): EnvReset | Promise<EnvReset>;
  /** Applies one action (the agent's `Action.action`). */
  abstract step(action: JsonValue): EnvStepResult | Promise<EnvStepResult>;
  /** Releases resources; called once when the driver is done with this instance. */
  close(): void | Promise<void> {}
  /** Optional: the env's state after the last step, stored with the step (keep it well under 1 MB). */
  snapshot?(): JsonValue | Promise<JsonValue>;
  /** Optional: restores what `snapshot()` returned, instead of replaying actions. */
  restore?(snapshot: JsonValue): void | Promise<void>;

  /** Whether one instance may serve concurrent rollouts. The seed's default: true. */
  static isMultithreadSafe(): boolean {
    return true;
  }
}

/**
 * The static side of an environment class: `fromDict` builds one from the agent's `envArgs` merged
 * with `{ task }` (the seed's `from_dict`).
 */
export interface EnvClass<E extends BaseEnv = BaseEnv> {
  fromDict(info: JsonObject): E | Promise<E>;
  isMultithreadSafe(): boolean;
}
