/** @module The public authoring API of edge-rollout. */
export { BaseAgent, type AgentClass } from "./base-agent";
export { BaseEnv, type EnvClass, type EnvReset, type EnvStepResult } from "./base-env";
export type { ModelResponse } from "./model-response";
export {
  AgentRegistry,
  agentRegistry,
  defineAgent,
  getAgentByName,
  sumStepRewards,
  type AgentDefinition,
  type DefineAgentOptions,
  type StepwiseAgentDefinition,
} from "./agent-registry";
export type { Action } from "../schemas/action";
export type { ChatMessage, ToolCall, ToolDefinition } from "../schemas/chat";
export type { JsonObject, JsonValue } from "../schemas/json";
export type { AgentTask } from "../schemas/agent-task";
export type { Step } from "../schemas/step";
export type { Trajectory } from "../schemas/trajectory";
