/** @module A workflow's registered config (Osmosis' AgentWorkflowConfig): its name, description and concurrency limit. */
import { z } from "zod";

/** How many rollouts of one workflow may run at once (Osmosis' `ConcurrencyConfig`). */
export const WorkflowConcurrency = z
  .object({
    /** At most this many rollouts of the workflow in flight in one batch; absent = the batch's own `max_concurrent`. */
    max_concurrent: z
      .int("concurrency.max_concurrent must be an integer")
      .min(1, "concurrency.max_concurrent must be >= 1")
      .nullish(),
  })
  .strict();
export type WorkflowConcurrency = z.infer<typeof WorkflowConcurrency>;

/**
 * The reserved fields of a workflow's config; any other field is the workflow's own (it reaches
 * `ctx.config` and the constructor unchanged), as in Osmosis where the config allows extra fields.
 * `name`, when given, must equal the registered name; `concurrency.max_concurrent` caps how many
 * rollouts of this workflow a batch keeps in flight (the smaller of it and the batch's
 * `max_concurrent` wins): a workflow that drives a rate-limited tool server names its limit once.
 *
 * @example
 * defineWorkflow({ name: "search", workflow: Search, config: { description: "web search", concurrency: { max_concurrent: 8 }, top_k: 3 } });
 */
export const AgentWorkflowConfig = z.looseObject({
  name: z.string().min(1).max(256).optional(),
  description: z.string().nullish(),
  concurrency: WorkflowConcurrency.optional(),
});
export type AgentWorkflowConfig = z.infer<typeof AgentWorkflowConfig>;

/** Osmosis' name for a grader's config; the same reserved fields. */
export const GraderConfig = AgentWorkflowConfig;
export type GraderConfig = AgentWorkflowConfig;

/** The limit a config sets, or null; throws a TypeError naming the field when the reserved fields are malformed. */
export function workflowLimits(
  agent: string,
  config: unknown,
): { description: string | null; maxConcurrent: number | null } {
  if (config === null || typeof config !== "object" || Array.isArray(config))
    return { description: null, maxConcurrent: null };
  const parsed = AgentWorkflowConfig.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new TypeError(`agent "${agent}": config.${issue.path.join(".")}: ${issue.message}`);
  }
  if (parsed.data.name !== undefined && parsed.data.name !== agent)
    throw new TypeError(
      `agent "${agent}": config.name is "${parsed.data.name}"; it must equal the registered name`,
    );
  return {
    description: parsed.data.description ?? null,
    maxConcurrent: parsed.data.concurrency?.max_concurrent ?? null,
  };
}
