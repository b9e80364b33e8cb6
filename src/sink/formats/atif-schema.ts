/**
 * @module A validator for ATIF v1.7 documents (Harbor's Agent Trajectory Interchange Format).
 *
 * Written from the spec: Harbor's RFC 0001 "Agent Trajectory Interchange Format (ATIF)
 * Specification", changelog v1.7 (April 2026; laude-institute/harbor,
 * docs/rfcs/0001-trajectory-format.md). Objects are closed (unknown fields are refused, as in
 * Harbor's Pydantic models); optional fields accept null, which Harbor's models also do.
 *
 * Beyond field shapes it enforces the spec's cross-field rules: `schema_version` is
 * "ATIF-v1.7"; `step_id`s run 1, 2, 3, …; every observation result's `source_call_id` names a
 * `tool_call_id` of the same or an earlier agent step; agent-only fields (`model_name`,
 * `reasoning_effort`, `reasoning_content`, `tool_calls`, `metrics`) appear on agent steps only;
 * an agent step with `llm_call_count: 0` has no `metrics` or `reasoning_content`; embedded
 * subagents carry unique `trajectory_id`s and a subagent ref is resolvable. One rule is
 * stricter than the spec's "should": `logprobs` and `completion_token_ids` have equal lengths
 * when both are present, because our documents feed RL pipelines.
 */
import { z } from "zod";
import { JsonObject } from "../../schemas/json";

/** The version this module validates and `toAtif` writes. */
export const ATIF_SCHEMA_VERSION = "ATIF-v1.7";

/** Text or an image stored beside the trajectory (v1.6+). */
export const AtifContentPart = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text"), text: z.string() }),
  z.strictObject({
    type: z.literal("image"),
    source: z.strictObject({
      media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]),
      path: z.string().min(1),
    }),
  }),
]);
export type AtifContentPart = z.infer<typeof AtifContentPart>;

const Content = z.union([z.string(), z.array(AtifContentPart)]);

/** One tool call of an agent step; `arguments` must be a JSON object (possibly empty). */
export const AtifToolCall = z.strictObject({
  tool_call_id: z.string().min(1),
  function_name: z.string().min(1),
  arguments: JsonObject,
  extra: JsonObject.nullish(),
});
export type AtifToolCall = z.infer<typeof AtifToolCall>;

/** Per-step LLM metrics, including the engine's token ids and logprobs for RL. */
export const AtifMetrics = z
  .strictObject({
    prompt_tokens: z.int().min(0).nullish(),
    completion_tokens: z.int().min(0).nullish(),
    cached_tokens: z.int().min(0).nullish(),
    cost_usd: z.number().nullish(),
    prompt_token_ids: z.array(z.int()).nullish(),
    completion_token_ids: z.array(z.int()).nullish(),
    logprobs: z.array(z.number()).nullish(),
    extra: JsonObject.nullish(),
  })
  .superRefine((metrics, ctx) => {
    if (
      metrics.logprobs &&
      metrics.completion_token_ids &&
      metrics.logprobs.length !== metrics.completion_token_ids.length
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["logprobs"],
        message: `logprobs has ${metrics.logprobs.length} entries but completion_token_ids has ${metrics.completion_token_ids.length}`,
      });
    }
  });
export type AtifMetrics = z.infer<typeof AtifMetrics>;

/** A reference to a delegated subagent's trajectory: embedded (`trajectory_id`) or a file (`trajectory_path`). */
export const AtifSubagentRef = z
  .strictObject({
    trajectory_id: z.string().min(1).nullish(),
    trajectory_path: z.string().min(1).nullish(),
    session_id: z.string().nullish(),
    extra: JsonObject.nullish(),
  })
  .refine((ref) => Boolean(ref.trajectory_id || ref.trajectory_path), {
    message: "a subagent ref must set trajectory_id or trajectory_path",
  });

/** One result in an observation; `source_call_id` ties it to a tool call. */
export const AtifObservationResult = z.strictObject({
  source_call_id: z.string().nullish(),
  content: Content.nullish(),
  subagent_trajectory_ref: z.array(AtifSubagentRef).nullish(),
  extra: JsonObject.nullish(),
});
export type AtifObservationResult = z.infer<typeof AtifObservationResult>;

/** Environment feedback after a step's actions, or the result of a system operation. */
export const AtifObservation = z.strictObject({ results: z.array(AtifObservationResult) });
export type AtifObservation = z.infer<typeof AtifObservation>;

const AGENT_ONLY_FIELDS = [
  "model_name",
  "reasoning_effort",
  "reasoning_content",
  "tool_calls",
  "metrics",
] as const;

/** One step: a system prompt, a user message, or a complete agent turn. */
export const AtifStep = z
  .strictObject({
    step_id: z.int().min(1),
    timestamp: z.iso.datetime({ offset: true }).nullish(),
    source: z.enum(["system", "user", "agent"]),
    model_name: z.string().nullish(),
    reasoning_effort: z.union([z.string(), z.number()]).nullish(),
    message: Content,
    reasoning_content: z.string().nullish(),
    tool_calls: z.array(AtifToolCall).nullish(),
    observation: AtifObservation.nullish(),
    metrics: AtifMetrics.nullish(),
    extra: JsonObject.nullish(),
    llm_call_count: z.int().min(0).nullish(),
    is_copied_context: z.boolean().nullish(),
  })
  .superRefine((step, ctx) => {
    for (const field of AGENT_ONLY_FIELDS) {
      if (step.source !== "agent" && step[field] != null) {
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `${field} is only allowed on agent steps (step ${step.step_id} is a ${step.source} step)`,
        });
      }
    }
    if (step.source === "agent" && step.llm_call_count === 0) {
      for (const field of ["metrics", "reasoning_content"] as const) {
        if (step[field] != null)
          ctx.addIssue({
            code: "custom",
            path: [field],
            message: `${field} must be absent on a step with llm_call_count 0 (step ${step.step_id})`,
          });
      }
    }
  });
export type AtifStep = z.infer<typeof AtifStep>;

/** The agent system that produced the trajectory. */
export const AtifAgent = z.strictObject({
  name: z.string().min(1),
  version: z.string().min(1),
  model_name: z.string().nullish(),
  tool_definitions: z.array(JsonObject).nullish(),
  extra: JsonObject.nullish(),
});
export type AtifAgent = z.infer<typeof AtifAgent>;

/** Aggregate metrics of the whole trajectory. */
export const AtifFinalMetrics = z.strictObject({
  total_prompt_tokens: z.int().min(0).nullish(),
  total_completion_tokens: z.int().min(0).nullish(),
  total_cached_tokens: z.int().min(0).nullish(),
  total_cost_usd: z.number().nullish(),
  total_steps: z.int().min(0).nullish(),
  extra: JsonObject.nullish(),
});

/** Issues of the rules that span steps: sequential ids and tool-call references. */
function checkSteps(steps: readonly AtifStep[], ctx: z.RefinementCtx): void {
  const toolCallIds = new Set<string>();
  steps.forEach((step, index) => {
    if (step.step_id !== index + 1) {
      ctx.addIssue({
        code: "custom",
        path: ["steps", index, "step_id"],
        message: `step_id is ${step.step_id} but steps must be numbered 1, 2, 3, … (expected ${index + 1})`,
      });
    }
    if (step.source === "agent")
      for (const call of step.tool_calls ?? []) toolCallIds.add(call.tool_call_id);
    step.observation?.results.forEach((result, r) => {
      if (result.source_call_id != null && !toolCallIds.has(result.source_call_id)) {
        ctx.addIssue({
          code: "custom",
          path: ["steps", index, "observation", "results", r, "source_call_id"],
          message: `source_call_id "${result.source_call_id}" matches no tool_call_id of this or an earlier agent step`,
        });
      }
    });
  });
}

/** Embedded subagents need unique `trajectory_id`s, and an embedded-only ref must find its subagent. */
function checkSubagents(
  doc: {
    steps: readonly AtifStep[];
    subagent_trajectories?: ReadonlyArray<{ trajectory_id?: string | null }> | null;
  },
  ctx: z.RefinementCtx,
): void {
  const embedded = new Set<string>();
  (doc.subagent_trajectories ?? []).forEach((sub, index) => {
    const id = sub.trajectory_id;
    if (!id)
      ctx.addIssue({
        code: "custom",
        path: ["subagent_trajectories", index, "trajectory_id"],
        message: "an embedded subagent trajectory must set trajectory_id",
      });
    else if (embedded.has(id))
      ctx.addIssue({
        code: "custom",
        path: ["subagent_trajectories", index, "trajectory_id"],
        message: `trajectory_id "${id}" is used by two embedded subagents`,
      });
    else embedded.add(id);
  });
  doc.steps.forEach((step, index) =>
    step.observation?.results.forEach((result, r) =>
      result.subagent_trajectory_ref?.forEach((ref, k) => {
        if (ref.trajectory_id && !ref.trajectory_path && !embedded.has(ref.trajectory_id)) {
          ctx.addIssue({
            code: "custom",
            path: [
              "steps",
              index,
              "observation",
              "results",
              r,
              "subagent_trajectory_ref",
              k,
              "trajectory_id",
            ],
            message: `trajectory_id "${ref.trajectory_id}" matches no embedded subagent trajectory`,
          });
        }
      }),
    ),
  );
}

/** A whole ATIF v1.7 document (embedded subagents are documents of the same shape). */
export const AtifTrajectory = z
  .strictObject({
    schema_version: z.literal(ATIF_SCHEMA_VERSION, {
      error: `schema_version must be "${ATIF_SCHEMA_VERSION}"`,
    }),
    session_id: z.string().min(1).nullish(),
    trajectory_id: z.string().min(1).nullish(),
    agent: AtifAgent,
    steps: z.array(AtifStep),
    notes: z.string().nullish(),
    final_metrics: AtifFinalMetrics.nullish(),
    continued_trajectory_ref: z.string().nullish(),
    extra: JsonObject.nullish(),
    get subagent_trajectories(): z.ZodOptional<z.ZodNullable<z.ZodArray<typeof AtifTrajectory>>> {
      return z.array(AtifTrajectory).nullish();
    },
  })
  .superRefine((doc, ctx) => {
    checkSteps(doc.steps, ctx);
    checkSubagents(doc, ctx);
  });
export type AtifTrajectory = z.infer<typeof AtifTrajectory>;

/** One problem with a document: where (a dotted path, "" for the root) and what. */
export interface AtifIssue {
  path: string;
  message: string;
}

/**
 * Validates a document against ATIF v1.7 and returns every issue found ([] when valid).
 *
 * @example
 * const issues = validateAtif(toAtif(view));
 * if (issues.length > 0) console.warn(issues.map((i) => `${i.path}: ${i.message}`).join("\n"));
 */
export function validateAtif(doc: unknown): AtifIssue[] {
  const parsed = AtifTrajectory.safeParse(doc);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
}
