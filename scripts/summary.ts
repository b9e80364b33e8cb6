/** @module The demo's summary table: per agent, rollouts, reward, steps, tokens and reasons. */
import type { RolloutView } from "../src/schemas/rollout-api";

/** Aggregates of one agent's rollouts. */
export interface AgentSummary {
  agent: string;
  rollouts: number;
  succeeded: number;
  meanReward: number;
  meanSteps: number;
  promptTokens: number;
  completionTokens: number;
  reasons: Record<string, number>;
}

/** Groups views by agent and aggregates them. */
export function summarize(views: RolloutView[]): AgentSummary[] {
  const byAgent = new Map<string, RolloutView[]>();
  for (const view of views) byAgent.set(view.agent, [...(byAgent.get(view.agent) ?? []), view]);
  return [...byAgent.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([agent, list]) => {
    const reasons: Record<string, number> = {};
    for (const view of list) reasons[view.termination_reason ?? "none"] = (reasons[view.termination_reason ?? "none"] ?? 0) + 1;
    return {
      agent,
      rollouts: list.length,
      succeeded: list.filter((view) => view.status === "succeeded").length,
      meanReward: list.reduce((sum, view) => sum + (view.reward ?? 0), 0) / list.length,
      meanSteps: list.reduce((sum, view) => sum + view.trajectory.steps.length, 0) / list.length,
      promptTokens: list.reduce((sum, view) => sum + view.usage.prompt_tokens, 0),
      completionTokens: list.reduce((sum, view) => sum + view.usage.completion_tokens, 0),
      reasons,
    };
  });
}

/** Renders the summary as an aligned text table plus the wall time. */
export function formatSummary(summaries: AgentSummary[], wallMs: number): string {
  const header = ["agent", "rollouts", "ok", "mean reward", "mean steps", "prompt tok", "completion tok", "termination reasons"];
  const rows = summaries.map((s) => [
    s.agent,
    String(s.rollouts),
    String(s.succeeded),
    s.meanReward.toFixed(3),
    s.meanSteps.toFixed(2),
    String(s.promptTokens),
    String(s.completionTokens),
    Object.entries(s.reasons).map(([reason, count]) => `${reason}=${count}`).join(" "),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd();
  const total = summaries.reduce((n, s) => n + s.rollouts, 0);
  return [line(header), ...rows.map(line), "", `${total} rollouts in ${(wallMs / 1000).toFixed(2)} s wall time`].join("\n");
}
