/** @module The workflow engine: an AgentWorkflow run as attempts, its sample scored by its Grader. */
import type { z } from "zod";
import { type AgentTask, withoutGroundTruth } from "../../schemas/agent-task";
import { ChatMessage } from "../../schemas/chat";
import type { JsonObject } from "../../schemas/json";
import type { LlmCall } from "../../schemas/llm-call";
import {
  AgentWorkflowOutput,
  type GraderContext,
  type WorkflowAgentDefinition,
  type WorkflowSample,
} from "../../sdk/agent-workflow";
import { AgentContractError } from "../../sdk/contract-error";
import type { ResolvedResources, ResourceSpecs } from "../../sdk/resources";
import type { AttemptAgent, AttemptScope } from "./run-attempt";

function issues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.join(".") || "(output)"}: ${issue.message}`)
    .join("; ");
}

/**
 * `task.content` when it is a non-empty message list, else a batch row's whole chat (kept in
 * `extra_args.prompt` by the row mapping, system message included), else the problem as one user
 * message.
 */
export function promptOf(task: AgentTask): ChatMessage[] {
  for (const candidate of [task.content, task.extra_args.prompt]) {
    const messages = ChatMessage.array().min(1).safeParse(candidate);
    if (messages.success) return messages.data;
  }
  return [{ role: "user", content: task.problem }];
}

/** The sample of an attempt that returned nothing: its last chat call's prompt and answer. */
function sampleFromCalls(calls: LlmCall[]): WorkflowSample {
  const last = calls
    .filter((call) => call.purpose !== "judge" && Array.isArray(call.request.messages))
    .at(-1);
  if (!last) return { messages: [], metrics: {} };
  const messages = ChatMessage.array().safeParse([
    ...(last.request.messages as unknown[]),
    last.response_message,
  ]);
  return { messages: messages.success ? messages.data : [], metrics: {} };
}

/** Validates what `run` returned; unknown fields and non-finite metrics are contract errors naming the field. */
async function sampleOf(
  result: unknown,
  scope: AttemptScope,
  name: string,
): Promise<{ sample: WorkflowSample; returned: boolean }> {
  if (result === undefined || result === null)
    return { sample: sampleFromCalls(await scope.calls()), returned: false };
  if (Array.isArray(result)) {
    const messages = ChatMessage.array().safeParse(result);
    if (!messages.success)
      throw new AgentContractError(
        `workflow "${name}" returned an invalid message list: ${issues(messages.error)}`,
      );
    return { sample: { messages: messages.data, metrics: {} }, returned: true };
  }
  const output = AgentWorkflowOutput.safeParse(result);
  if (!output.success)
    throw new AgentContractError(
      `workflow "${name}" returned an invalid AgentWorkflowOutput: ${issues(output.error)}`,
    );
  return { sample: output.data, returned: true };
}

/** Runs the grader; a reward that is not a finite number, or none at all, is a contract error. */
async function grade(
  definition: WorkflowAgentDefinition,
  scope: AttemptScope,
  sample: WorkflowSample,
  metadata: JsonObject,
): Promise<number> {
  const Grader = definition.grader!;
  const llm = await scope.judgeLlm();
  const set: { reward: number | null; invalid: unknown } = { reward: null, invalid: undefined };
  const context: GraderContext<unknown> = {
    label: scope.task.ground_truth,
    sample,
    metadata,
    config: definition.config,
    rollout: scope.rollout,
    llm,
    setReward(reward: number) {
      if (typeof reward !== "number" || !Number.isFinite(reward)) {
        set.invalid = reward;
        throw new AgentContractError(
          `grader ${Grader.name} set the reward to ${String(reward)}; a reward must be a finite number`,
        );
      }
      set.reward = reward;
    },
  };
  const returned = await new Grader(definition.config).grade(context);
  // Checked again after grade returns, in case the grader caught the setter's error.
  if (set.invalid !== undefined) context.setReward(set.invalid as number);
  if (returned !== undefined && returned !== null) context.setReward(returned);
  if (set.reward === null)
    throw new AgentContractError(
      `grader ${Grader.name} set no reward; call ctx.setReward(<finite number>)`,
    );
  return set.reward;
}

/**
 * One attempt runs a fresh workflow with the prompt, metadata (no ground truth), config, llm and
 * artifacts; its output (or, when it returns nothing, its last recorded model call) is the sample,
 * which a fresh grader scores against the label. Without a grader the last emitted reward counts.
 */
export function workflowAttempt(definition: WorkflowAgentDefinition): AttemptAgent {
  return {
    resources: definition.resources,
    async run(scope) {
      // Rows stored before labels were kept out of extra_args may still carry one: strip it here too.
      const metadata: JsonObject = {
        ...withoutGroundTruth(scope.task.extra_args),
        task_id: scope.task.task_id,
      };
      const workflow = new definition.workflow(definition.config);
      const result = await workflow.run({
        prompt: promptOf(scope.task),
        metadata,
        config: definition.config,
        llm: scope.llm,
        artifacts: scope.artifacts,
        signal: scope.signal,
        rollout: scope.rollout,
        resources: scope.resources as ResolvedResources<ResourceSpecs>,
        heartbeat: scope.heartbeat,
      });
      const { sample, returned } = await sampleOf(result, scope, definition.name);
      if (Object.keys(sample.metrics).length > 0)
        scope.spans.append({ kind: "annotation", name: "metrics", value: sample.metrics });
      if (sample.info) scope.spans.append({ kind: "annotation", name: "info", value: sample.info });
      const messages = returned ? sample.messages : undefined;
      if (!definition.grader) return { reward: scope.spans.lastReward, messages };
      const reward = await grade(definition, scope, sample, metadata);
      scope.spans.append({ kind: "reward", name: "grader", value: reward });
      return { reward, messages };
    },
  };
}
