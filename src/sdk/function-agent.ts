/** @module Function agents: Agent-lightning's `@rollout` in TypeScript. */
import type { AgentTask } from "../schemas/agent-task";
import type { SpanInput } from "../schemas/span";
import { type AgentRegistry, agentRegistry } from "./agent-registry";
import { checkDestructuredContext, checkResourceSpecs } from "./definition-checks";
import type { LlmResource, ResolvedResources, ResourceSpecs } from "./resources";
import type { Artifacts, RolloutInfo } from "./rollout-info";

/** What every function agent's context holds besides its declared resources. */
export interface BaseRolloutContext {
  /** The rollout's task (problem, ground_truth, extra_args, …). */
  task: AgentTask;
  /** The model, bound to this rollout; `llm.openai` is a ready client. */
  llm: LlmResource;
  /** The rollout and attempt being run (`rollout_id`, `mode`, `attempt`). */
  rollout: RolloutInfo;
  /** Aborts when the attempt is given up. */
  signal: AbortSignal;
  /** Files under the rollout's prefix in R2. */
  artifacts: Artifacts;
  /** Marks the attempt alive (see `heartbeat` in emitters). */
  heartbeat: () => void;
}

/** Context fields every function agent may destructure. */
export const ROLLOUT_CONTEXT_FIELDS = ["task", "llm", "rollout", "signal", "artifacts", "heartbeat"] as const;

/** A function agent's context: the base fields plus each declared resource under its key. */
export type RolloutContext<R extends ResourceSpecs = {}> = BaseRolloutContext & ResolvedResources<R>;

/**
 * What an agent's rollout may return: the final reward, nothing (the reward is the last one
 * emitted), or spans to add (the reward is then the last reward among them and the emitted ones).
 */
export type RolloutResult = number | SpanInput[] | null | undefined | void;

/** A function agent. */
export type RolloutFunction<R extends ResourceSpecs = {}> = (context: RolloutContext<R>) => RolloutResult | Promise<RolloutResult>;

/** A registered function agent: run as attempts by the function engine. */
export interface FunctionAgentDefinition<R extends ResourceSpecs = ResourceSpecs> {
  kind: "function";
  name: string;
  resources: R;
  run: RolloutFunction<R>;
}

/** Options of `defineRollout`. Declare `resources` before `run`, so TypeScript types `run`'s context from them. */
export interface DefineRolloutOptions<R extends ResourceSpecs> {
  /** Unique name used in `POST /v1/rollouts {agent}`. */
  name: string;
  /** Named resources the context gets, by key. Default: none. */
  resources?: R;
  run: RolloutFunction<R>;
}

/**
 * Registers a function agent. Asking the context for a field that is not there is a type error,
 * and (for destructured contexts) a TypeError here, at registration.
 *
 * @example
 * defineRollout({
 *   name: "solver",
 *   resources: { promptTemplate: promptTemplate("Solve: {problem}") },
 *   run: async ({ task, llm, promptTemplate }) => {
 *     const reply = await llm.openai.chat.completions.create({ model: llm.model, messages: [{ role: "user", content: promptTemplate.format({ problem: task.problem }) }] });
 *     return reply.choices[0]?.message.content?.includes(String(task.ground_truth)) ? 1 : 0;
 *   },
 * });
 */
export function defineRollout<R extends ResourceSpecs = {}>(options: DefineRolloutOptions<R>, registry: AgentRegistry = agentRegistry): FunctionAgentDefinition<R> {
  const resources = options.resources ?? ({} as R);
  if (typeof options.run !== "function") throw new TypeError(`agent "${options.name}": run must be a function`);
  checkResourceSpecs(options.name, resources, ROLLOUT_CONTEXT_FIELDS);
  checkDestructuredContext(options.name, options.run, ROLLOUT_CONTEXT_FIELDS, resources);
  const definition: FunctionAgentDefinition<R> = { kind: "function", name: options.name, resources, run: options.run };
  registry.register(definition as unknown as FunctionAgentDefinition);
  return definition;
}

/**
 * Registers `fn` as a function agent: the `@rollout` decorator of Agent-lightning, with the name
 * given explicitly (TypeScript has no reliable function names at run time once bundled).
 *
 * @example
 * export const echo = rollout(async ({ task, llm }) => {
 *   const reply = await llm.openai.chat.completions.create({ model: llm.model, messages: [{ role: "user", content: task.problem }] });
 *   emitReward(reply.choices[0]?.message.content ? 1 : 0);
 * }, { name: "echo" });
 */
export function rollout<R extends ResourceSpecs = {}>(fn: RolloutFunction<R>, options: Omit<DefineRolloutOptions<R>, "run">, registry: AgentRegistry = agentRegistry): FunctionAgentDefinition<R> {
  return defineRollout({ ...options, run: fn }, registry);
}
