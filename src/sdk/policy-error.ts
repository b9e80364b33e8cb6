/** @module An error user code raises to say the policy, not the infrastructure, is at fault. */

/**
 * Thrown by an environment or agent (stepwise `BaseEnv.step`, `BaseAgent.updateFromModel`, …) when
 * the model's own output is what failed, e.g. a malformed tool call. The rollout ends
 * `ENV_ERROR` / `AGENT_ERROR` as any throw does, but it is a *policy outcome*: scored with
 * `reward` (default 0) and kept in its GRPO group, never retried or withheld like an
 * infrastructure failure.
 *
 * @example
 * if (!isValidToolCall(action)) throw new PolicyError("malformed tool call", { reward: -1 });
 */
export class PolicyError extends Error {
  override name = "PolicyError";
  /** The penalty the rollout is scored with. */
  readonly reward: number;
  constructor(message: string, options: { reward?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    const reward = options.reward ?? 0;
    if (!Number.isFinite(reward))
      throw new RangeError("PolicyError reward must be a finite number");
    this.reward = reward;
  }
}
