/**
 * @module The search workflow's grader (Osmosis `Grader`): it alone sees the label, and it scores
 * the whole sample, not just the answer: a right answer no tool result supports is a lucky guess.
 */
import { extractBoxed, gradeBoxedAnswer } from "../../src/agents/grading";
import { messageText } from "../../src/schemas/chat";
import { Grader, type GraderContext } from "../../src/sdk";
import type { SearchConfig } from "./search-workflow";

/** 1 for a right boxed answer found in a tool result, `ungrounded_reward` for a right one that was not, else 0. */
export class AnswerGrader extends Grader<SearchConfig> {
  grade(ctx: GraderContext<SearchConfig>) {
    const answer = ctx.sample.messages.filter((message) => message.role === "assistant").at(-1);
    const text = answer ? messageText(answer) : "";
    if (gradeBoxedAnswer(text, ctx.label) === 0) return ctx.setReward(0);
    const boxed = extractBoxed(text) ?? "";
    const grounded = ctx.sample.messages.some(
      (message) =>
        message.role === "tool" &&
        new RegExp(`\\b${boxed.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`).test(
          messageText(message),
        ),
    );
    ctx.setReward(grounded ? 1 : ctx.config.ungrounded_reward);
  }
}
