/**
 * @module Engines users write and register by name (AgentSDK's BaseEngineWrapper): a class whose
 * `generateTrajectory(task, stream)` drives an agent and its environment its own way.
 */
import type { AgentTask } from "../schemas/agent-task";
import type { ChatMessage } from "../schemas/chat";
import type { JsonObject, JsonValue } from "../schemas/json";
import type { RolloutConfig } from "../schemas/rollout-config";
import type { BaseAgent } from "./base-agent";
import type { BaseEnv } from "./base-env";
import type { LlmResource } from "./resources";
import type { RolloutInfo } from "./rollout-info";

/** What an engine reports while it runs: a step, or any event of its own (`type` names it). */
export type EngineStreamEvent =
  | {
      type: "step";
      step: {
        action: JsonValue;
        observation?: JsonValue;
        reward?: number;
        done?: boolean;
        thought?: string;
        info?: JsonObject;
      };
    }
  | { type: string; [field: string]: JsonValue };

/** The seed's stream queue: events put here reach the rollout's SSE stream (`GET /v1/rollouts/:id/events`). */
export type EngineStreamFn = (event: EngineStreamEvent) => void;

/** What an engine is given: fresh agent and env instances of the agent it runs, the model, the rollout. */
export interface EngineContext {
  agent: BaseAgent;
  env: BaseEnv;
  /** The rollout's model (calls are recorded and trained on like any agent's). */
  llm: LlmResource;
  config: RolloutConfig;
  rollout: RolloutInfo;
  signal: AbortSignal;
  /** Keeps the attempt alive through long work that makes no model call. */
  heartbeat: () => void;
}

/** What `generateTrajectory` returns: the reward (default: the sum of streamed step rewards) and the conversation, if any. */
export type EngineTrajectory =
  number | null | undefined | { reward?: number | null; messages?: ChatMessage[] };

/**
 * A user engine. It runs as an attempt (no replay: a crash starts the next attempt from scratch),
 * with a fresh instance, agent and env each attempt.
 *
 * @example
 * class OneShot extends BaseEngineWrapper {
 *   async generateTrajectory(task: AgentTask, stream: EngineStreamFn) {
 *     const [observation] = await this.context.env.reset();
 *     … one model call, env.step(action) …
 *     stream({ type: "step", step: { action, observation, reward, done: true } });
 *     return reward;
 *   }
 * }
 * registerEngine("one-shot", OneShot);
 * defineAgent({ name: "math-one-shot", envClass: MathEnv, agentClass: MathAgent, engine: "one-shot" });
 */
export abstract class BaseEngineWrapper {
  readonly context: EngineContext;

  constructor(context: EngineContext) {
    this.context = context;
  }

  abstract generateTrajectory(
    task: AgentTask,
    stream: EngineStreamFn,
  ): EngineTrajectory | Promise<EngineTrajectory>;
}

/** An engine class as registered. */
export type EngineClass = new (context: EngineContext) => BaseEngineWrapper;

/** The engine names the runtime owns: `stepwise` (the default of `defineAgent`) and the attempt engines. */
export const BUILT_IN_ENGINES = ["stepwise", "function", "lit", "workflow"] as const;

const ENGINE_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** Engines by name. One default instance backs `registerEngine`; tests may make their own. */
export class EngineRegistry {
  #engines = new Map<string, EngineClass>();

  /** Adds an engine; a built-in name or a second engine under one name is a programming error. */
  register(name: string, engineClass: EngineClass): EngineClass {
    if (!ENGINE_NAME.test(name))
      throw new TypeError(`engine name "${name}" must match ${ENGINE_NAME}`);
    if ((BUILT_IN_ENGINES as readonly string[]).includes(name))
      throw new TypeError(`engine "${name}" is built in; register yours under another name`);
    if (this.#engines.has(name)) throw new TypeError(`engine "${name}" is already registered`);
    if (typeof engineClass !== "function" || !(engineClass.prototype instanceof BaseEngineWrapper))
      throw new TypeError(`engine "${name}" must be a class extending BaseEngineWrapper`);
    this.#engines.set(name, engineClass);
    return engineClass;
  }

  /** The engine registered under `name`, or undefined. */
  get(name: string): EngineClass | undefined {
    return this.#engines.get(name);
  }

  /** Every engine name, built-in ones first. */
  names(): string[] {
    return [...BUILT_IN_ENGINES, ...[...this.#engines.keys()].sort()];
  }
}

/** The registry `defineAgent({ engine })` resolves against. */
export const engineRegistry = new EngineRegistry();

/**
 * Registers a user engine under `name` (AgentSDK's engine wrapper registry).
 *
 * @example
 * registerEngine("one-shot", OneShot);
 */
export function registerEngine(
  name: string,
  engineClass: EngineClass,
  registry: EngineRegistry = engineRegistry,
): EngineClass {
  return registry.register(name, engineClass);
}
