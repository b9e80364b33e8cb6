/** @module Workflows and graders (Osmosis): a workflow produces a sample, a grader scores it against the label. */
import { z } from "zod";
import { ChatMessage } from "../schemas/chat";
import { JsonObject, JsonValue } from "../schemas/json";
import type { LlmResource, ResolvedResources, ResourceSpecs } from "./resources";
import type { Artifacts, RolloutInfo } from "./rollout-info";

const finite = (what: string) =>
  z.custom<number>((value) => typeof value === "number" && Number.isFinite(value), {
    error: (issue) => `${what} must be a finite number (got ${String(issue.input)})`,
  });

/**
 * What a workflow's `run` may return: the conversation, named metrics and `info` (free-form JSON,
 * reserved in Osmosis; kept here as the rollout's `info` annotation span). Unknown fields and
 * non-finite metrics are refused (the rollout fails AGENT_ERROR naming them), never dropped.
 */
export const AgentWorkflowOutput = z
  .object({
    messages: z.array(ChatMessage),
    metrics: z.record(z.string(), finite("a metric")).default({}),
    info: JsonObject.nullish(),
  })
  .strict();
export type AgentWorkflowOutput = z.input<typeof AgentWorkflowOutput>;

/** What a workflow sees. The task's ground truth is not here: only the grader gets it (`label`). */
export interface WorkflowContext<Config = JsonObject, R extends ResourceSpecs = {}> {
  /**
   * The messages to start from, the whole chat: `task.content` when it is a message list, else a
   * batch row's chat (`task.extra_args.prompt`, system message included), else the problem as one
   * user message.
   */
  prompt: ChatMessage[];
  /** `task.extra_args`, plus `task_id`. */
  metadata: JsonObject;
  /** The workflow's registered config. */
  config: Config;
  llm: LlmResource;
  /** Files under the rollout's prefix in R2 (`rollouts/<id>/artifacts/`). */
  artifacts: Artifacts;
  signal: AbortSignal;
  rollout: RolloutInfo;
  resources: ResolvedResources<R>;
  heartbeat: () => void;
}

/** What `run` returns: an output, a message list, or nothing (the sample is then read off the attempt's LLM calls). */
export type WorkflowResult = AgentWorkflowOutput | ChatMessage[] | null | undefined | void;

/**
 * A workflow (Osmosis' AgentWorkflow). A new instance runs each attempt.
 *
 * @example
 * class Solve extends AgentWorkflow {
 *   async run(ctx: WorkflowContext) {
 *     const reply = await ctx.llm.openai.chat.completions.create({ model: ctx.llm.model, messages: ctx.prompt as never });
 *     return { messages: [...ctx.prompt, { role: "assistant", content: reply.choices[0]?.message.content ?? "" }], metrics: {} };
 *   }
 * }
 */
export abstract class AgentWorkflow<Config = JsonObject, R extends ResourceSpecs = {}> {
  /** The registered config (also `ctx.config`), handed to the constructor as Osmosis does. */
  readonly config: Config | undefined;

  constructor(config?: Config) {
    this.config = config;
  }

  abstract run(ctx: WorkflowContext<Config, R>): WorkflowResult | Promise<WorkflowResult>;
}

/** The sample a grader scores: the workflow's messages and metrics. */
export interface WorkflowSample {
  messages: ChatMessage[];
  metrics: Record<string, number>;
  /** The workflow's `info`, when it returned one. */
  info?: JsonObject | null;
}

/** What a grader sees. */
export interface GraderContext<Config = JsonObject> {
  /** The ground truth (`task.ground_truth`), never shown to the workflow. */
  label: JsonValue;
  sample: WorkflowSample;
  metadata: JsonObject;
  config: Config;
  rollout: RolloutInfo;
  /**
   * A model for judge calls (LLM-as-a-judge). Its calls go through the rollout's gateway and are
   * recorded with `purpose: "judge"`, apart from the workflow's: they are never trained on and
   * never become steps.
   */
  llm: LlmResource;
  /** Sets the rollout's reward; anything but a finite number fails the rollout. */
  setReward(reward: number): void;
}

/**
 * Scores a workflow's sample (Osmosis' Grader). A new instance grades each attempt. Set the reward
 * with `ctx.setReward(x)` (or return it).
 *
 * @example
 * class ExactMatch extends Grader {
 *   grade(ctx: GraderContext) { ctx.setReward(ctx.sample.messages.at(-1)?.content === String(ctx.label) ? 1 : 0); }
 * }
 */
export abstract class Grader<Config = JsonObject> {
  /** The registered config (also `ctx.config`), handed to the constructor as Osmosis does. */
  readonly config: Config | undefined;

  constructor(config?: Config) {
    this.config = config;
  }

  abstract grade(ctx: GraderContext<Config>): void | number | Promise<void | number>;
}

/** A registered workflow (and grader): run as attempts by the workflow engine. */
export interface WorkflowAgentDefinition<
  Config = unknown,
  R extends ResourceSpecs = ResourceSpecs,
> {
  /** Named reward dimensions the agent emits (`emitReward({acc: 1, …})`), which a batch's `filter.metric` may name besides `reward`. */
  rewardDimensions?: readonly string[];
  kind: "workflow";
  name: string;
  workflow: new (config?: Config) => AgentWorkflow<Config, R>;
  /** Null: the reward is the last one the workflow emitted. */
  grader: (new (config?: Config) => Grader<Config>) | null;
  config: Config;
  /** `config.description`, or null. */
  description: string | null;
  /** `config.concurrency.max_concurrent`: most rollouts of this workflow one batch keeps in flight; null = no own limit. */
  maxConcurrent: number | null;
  resources: R;
}
