/**
 * @module The attempt-style agents the soak runs beside the built-in stepwise ones: a function
 * agent, a LitAgent and a workflow with a grader, each one arithmetic question per rollout. A
 * share of their environments fail (soak-faults.ts).
 */
import { gradeBoxedAnswer } from "../../src/agents/grading";
import type { AgentTask } from "../../src/schemas/agent-task";
import { messageText } from "../../src/schemas/chat";
import {
  AgentWorkflow,
  Grader,
  type GraderContext,
  type WorkflowContext,
  type WorkflowResult,
} from "../../src/sdk/agent-workflow";
import { defineWorkflow } from "../../src/sdk/define-workflow";
import { rollout } from "../../src/sdk/define-rollout";
import { defineLitAgent } from "../../src/sdk/define-lit-agent";
import { LitAgent, type NamedResources } from "../../src/sdk/lit-agent";
import type { LlmResource } from "../../src/sdk/resources";
import { maybeEnvFault } from "./soak-faults";

async function ask(llm: LlmResource, content: string): Promise<string> {
  maybeEnvFault("before the call");
  const reply = await llm.openai.chat.completions.create({
    model: llm.model,
    messages: [{ role: "user", content }],
    max_tokens: 64,
  });
  return reply.choices[0]?.message.content ?? "";
}

/** `soak-function`: `rollout(...)`, one call, the graded answer. */
export const soakFunction = rollout(
  async ({ task, llm }) => gradeBoxedAnswer(await ask(llm, task.problem), task.ground_truth),
  { name: "soak-function" },
);

class SoakLit extends LitAgent {
  override async rollout(task: AgentTask, resources: NamedResources) {
    return gradeBoxedAnswer(await ask(resources.llm, task.problem), task.ground_truth);
  }
}
/** `soak-lit`: a LitAgent, one call, the graded answer. */
export const soakLit = defineLitAgent({ name: "soak-lit", agentClass: SoakLit });

class SoakWorkflow extends AgentWorkflow<Record<string, never>> {
  async run(ctx: WorkflowContext<Record<string, never>>): Promise<WorkflowResult> {
    const reply = await ctx.llm.openai.chat.completions.create({
      model: ctx.llm.model,
      messages: ctx.prompt as never,
      max_tokens: 64,
    });
    return {
      messages: [
        ...ctx.prompt,
        { role: "assistant", content: reply.choices[0]?.message.content ?? "" },
      ],
      metrics: {},
    };
  }
}
class SoakGrader extends Grader<Record<string, never>> {
  grade(ctx: GraderContext<Record<string, never>>) {
    maybeEnvFault("grader");
    const answer = ctx.sample.messages.filter((message) => message.role === "assistant").at(-1);
    ctx.setReward(gradeBoxedAnswer(answer ? messageText(answer) : "", ctx.label));
  }
}
/** `soak-workflow`: an AgentWorkflow and its Grader. */
export const soakWorkflow = defineWorkflow({
  name: "soak-workflow",
  workflow: SoakWorkflow,
  grader: SoakGrader,
  config: {},
});
