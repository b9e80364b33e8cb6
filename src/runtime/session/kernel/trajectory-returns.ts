/** @module The return-shaped fields of a trajectory: each step's Monte Carlo return, the tool-call and result rewards. */
import { primaryReward, type Span } from "../../../schemas/span";
import type { Step } from "../../../schemas/step";

/** The `info` key (of an env step) and the reward-span name that carry a tool-call reward. */
export const TOOLCALL_REWARD = "toolcall_reward";

/**
 * Each step with `mc_return` set to its Monte Carlo return, the discounted sum of its own and every
 * later step's reward: G_t = r_t + gamma · G_{t+1} (the seed's definition; `gamma` is the rollout
 * config's, default 1: the plain sum of rewards still to come).
 */
export function withMcReturns(steps: readonly Step[], gamma: number): Step[] {
  const out = new Array<Step>(steps.length);
  let later = 0;
  for (let index = steps.length - 1; index >= 0; index--) {
    const step = steps[index]!;
    later = step.reward + gamma * later;
    out[index] = { ...step, mc_return: later };
  }
  return out;
}

/**
 * The part of the rollout's reward earned by tool calls: the sum of every step's
 * `info.toolcall_reward` (an env that scores tool use reports it there) and of reward spans named
 * `toolcall_reward` (`emitReward(x, { name: "toolcall_reward" })` from an attempt agent). Values
 * that are not finite numbers are ignored. 0 when nothing reports one.
 */
export function toolcallReward(steps: readonly Step[], spans: readonly Span[]): number {
  let total = 0;
  for (const step of steps) {
    const value = step.info[TOOLCALL_REWARD];
    if (typeof value === "number" && Number.isFinite(value)) total += value;
  }
  for (const span of spans) {
    if (span.kind !== "reward" || span.name !== TOOLCALL_REWARD) continue;
    const value = primaryReward(span);
    if (value !== null) total += value;
  }
  return total;
}
