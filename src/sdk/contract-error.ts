/** @module The error for agent code that breaks the authoring contract (a bad reward, output or resource). */
import { AppError } from "../errors";

/**
 * Agent, workflow or grader code broke the contract: a non-finite reward, an output with unknown
 * fields, an undeclared resource, an emitter used outside a rollout. Unlike a crash it is not
 * retried (another attempt would break it the same way): the rollout fails AGENT_ERROR with this
 * message.
 */
export class AgentContractError extends AppError {
  override name = "AgentContractError";
  override readonly code = "agent_contract";
  override readonly status = 422;
}
