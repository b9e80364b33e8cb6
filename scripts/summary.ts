/**
 * @module The demo's summary table: per agent, rollouts, reward, steps, tokens, the training
 * samples the sink's builder cuts from the recorded calls (drift splits, trained tokens), reasons.
 */
import type { RolloutView } from "../src/schemas/rollout-api";
import { buildTrainingSamples } from "../src/training/sample-builder";

/** Aggregates of one agent's rollouts. */
export interface AgentSummary {
  agent: string;
  rollouts: number;
  succeeded: number;
  meanReward: number;
  meanSteps: number;
  promptTokens: number;
  completionTokens: number;
  /** Training samples cut from the rollouts' calls (cumulative mode). */
  samples: number;
  /** Where a call's prompt did not extend the previous call's prompt + completion (a new sample starts). */
  driftSplits: number;
  /** Response tokens with mask 1: every completion token once, and nothing else, when the masks are right. */
  trainedTokens: number;
  reasons: Record<string, number>;
}

function sampleTotals(list: readonly RolloutView[]): {
  samples: number;
  driftSplits: number;
  trainedTokens: number;
} {
  let samples = 0;
  let driftSplits = 0;
  let trainedTokens = 0;
  for (const view of list) {
    const built = buildTrainingSamples({
      rollout_id: view.rollout_id,
      status: view.status,
      termination_reason: view.termination_reason,
      reward: view.reward,
      calls: view.llm_calls,
      uid: view.rollout_id,
      sample_index: 0,
      mode: "cumulative",
    });
    samples += built.samples.length;
    driftSplits += built.drift_splits;
    for (const sample of built.samples)
      trainedTokens += sample.response_mask.reduce<number>((sum, mask) => sum + mask, 0);
  }
  return { samples, driftSplits, trainedTokens };
}

/** Groups views by agent and aggregates them. */
export function summarize(views: RolloutView[]): AgentSummary[] {
  const byAgent = new Map<string, RolloutView[]>();
  for (const view of views) byAgent.set(view.agent, [...(byAgent.get(view.agent) ?? []), view]);
  return [...byAgent.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([agent, list]) => {
      const reasons: Record<string, number> = {};
      for (const view of list)
        reasons[view.termination_reason ?? "none"] =
          (reasons[view.termination_reason ?? "none"] ?? 0) + 1;
      return {
        agent,
        rollouts: list.length,
        succeeded: list.filter((view) => view.status === "succeeded").length,
        meanReward: list.reduce((sum, view) => sum + (view.reward ?? 0), 0) / list.length,
        meanSteps: list.reduce((sum, view) => sum + view.trajectory.steps.length, 0) / list.length,
        promptTokens: list.reduce((sum, view) => sum + view.usage.prompt_tokens, 0),
        completionTokens: list.reduce((sum, view) => sum + view.usage.completion_tokens, 0),
        ...sampleTotals(list),
        reasons,
      };
    });
}

/** Renders the summary as an aligned text table plus the wall time. */
export function formatSummary(summaries: AgentSummary[], wallMs: number): string {
  const header = [
    "agent",
    "rollouts",
    "ok",
    "mean reward",
    "mean steps",
    "prompt tok",
    "completion tok",
    "samples",
    "drift splits",
    "trained tok",
    "termination reasons",
  ];
  const rows = summaries.map((s) => [
    s.agent,
    String(s.rollouts),
    String(s.succeeded),
    s.meanReward.toFixed(3),
    s.meanSteps.toFixed(2),
    String(s.promptTokens),
    String(s.completionTokens),
    String(s.samples),
    String(s.driftSplits),
    String(s.trainedTokens),
    Object.entries(s.reasons)
      .map(([reason, count]) => `${reason}=${count}`)
      .join(" "),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const total = summaries.reduce((n, s) => n + s.rollouts, 0);
  return [
    line(header),
    ...rows.map(line),
    "",
    `${total} rollouts in ${(wallMs / 1000).toFixed(2)} s wall time`,
  ].join("\n");
}
