/**
 * @module The search workflow (Osmosis `AgentWorkflow`): a tool loop over the corpus that never
 * sees the label; it returns the conversation and counts as metrics.
 */
import {
  AgentWorkflow,
  type ChatMessage,
  type ToolCall,
  type WorkflowContext,
} from "../../src/sdk";
import { runSearchTool, SEARCH_TOOLS } from "./corpus";

/** The workflow's (and grader's) registered config. */
export interface SearchConfig {
  /** Model calls per attempt. */
  max_turns: number;
  /** Documents a search returns. */
  top_k: number;
  /** Reward of a right answer no tool result supports (a guess). */
  ungrounded_reward: number;
}

/** The instructions the model gets before the question. */
export const SEARCH_SYSTEM_PROMPT =
  "Answer questions about edge-rollout. Use search to find documents and open_document to read one. Give the final answer in \\boxed{}.";

/** Searches and reads until the model answers without a tool call, or `max_turns` calls were made. */
export class SearchWorkflow extends AgentWorkflow<SearchConfig> {
  async run(ctx: WorkflowContext<SearchConfig>) {
    const messages: ChatMessage[] = [
      { role: "system", content: SEARCH_SYSTEM_PROMPT },
      ...ctx.prompt,
    ];
    const metrics = { turns: 0, searches: 0, opens: 0 };
    while (metrics.turns < ctx.config.max_turns) {
      metrics.turns++;
      const reply = await ctx.llm.openai.chat.completions.create(
        { model: ctx.llm.model, messages: messages as never, tools: SEARCH_TOOLS },
        { signal: ctx.signal },
      );
      const message = reply.choices[0]?.message;
      const calls: ToolCall[] = (message?.tool_calls ?? []).flatMap((call) =>
        call.type === "function"
          ? [{ id: call.id, type: "function" as const, function: call.function }]
          : [],
      );
      // Content and tool calls exactly as generated, so the next prompt extends this one token for token.
      messages.push({
        role: "assistant",
        content: message?.content ?? "",
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
      if (calls.length === 0) break;
      for (const call of calls) {
        if (call.function.name === "search") metrics.searches++;
        if (call.function.name === "open_document") metrics.opens++;
        messages.push({
          role: "tool",
          tool_call_id: call.id,
          content: runSearchTool(call.function.name, call.function.arguments, ctx.config.top_k),
        });
      }
    }
    return { messages, metrics };
  }
}
