/** @module What a function agent's or LitAgent's rollout returned, turned into the attempt's reward. */
import { SpanInput } from "../../schemas/span";
import { AgentContractError } from "../../sdk/contract-error";
import type { AttemptSpans } from "./attempt-spans";

function described(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return Array.isArray(value) ? "an array" : typeof value;
}

/**
 * A number is the final reward (recorded as a `final_reward` span); a list of spans is added in
 * order after the emitted ones; nothing leaves the reward to the emitters. Either way without a
 * number, the reward is the primary value of the attempt's last reward span (null when none).
 */
export function rewardFromResult(
  result: unknown,
  spans: AttemptSpans,
  what: string,
): number | null {
  const expected =
    "return a finite number (the reward), nothing (the last emitted reward counts), or a list of spans";
  if (result === undefined || result === null) return spans.lastReward;
  if (typeof result === "number") {
    if (!Number.isFinite(result))
      throw new AgentContractError(`${what} returned ${result}; ${expected}`);
    spans.append({ kind: "reward", name: "final_reward", value: result });
    return result;
  }
  if (!Array.isArray(result))
    throw new AgentContractError(`${what} returned ${described(result)}; ${expected}`);
  const parsed = result.map((span: unknown, index) => {
    const checked = SpanInput.safeParse(span);
    if (checked.success) return checked.data;
    const issue = checked.error.issues[0];
    throw new AgentContractError(
      `${what} returned an invalid span at [${index}]: ${issue?.path.join(".") || "(span)"}: ${issue?.message ?? "invalid"}`,
    );
  });
  for (const span of parsed) spans.append(span);
  return spans.lastReward;
}
