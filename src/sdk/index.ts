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
  type AgentKind,
  type DefineAgentOptions,
  type StepwiseAgentDefinition,
} from "./agent-registry";
export { defineRollout, rollout, type DefineRolloutOptions } from "./define-rollout";
export {
  ROLLOUT_CONTEXT_FIELDS,
  type BaseRolloutContext,
  type FunctionAgentDefinition,
  type RolloutContext,
  type RolloutFunction,
  type RolloutResult,
} from "./function-agent";
export { defineLitAgent, type DefineLitAgentOptions } from "./define-lit-agent";
export {
  LitAgent,
  type LitAgentClass,
  type LitAgentDefinition,
  type NamedResources,
} from "./lit-agent";
export {
  AgentWorkflow,
  AgentWorkflowOutput,
  Grader,
  type GraderContext,
  type WorkflowAgentDefinition,
  type WorkflowContext,
  type WorkflowResult,
  type WorkflowSample,
} from "./agent-workflow";
export { defineWorkflow, type DefineWorkflowOptions } from "./define-workflow";
export {
  emitAnnotation,
  emitException,
  emitMessage,
  emitObject,
  emitReward,
  heartbeat,
  operation,
  type SpanAttributes,
} from "./emitters";
export {
  jsonResource,
  promptTemplate,
  type FetchFunction,
  type LlmResource,
  type ResolvedResources,
  type ResourceSpec,
  type ResourceSpecs,
  type SamplingParameters,
} from "./resources";
export { PromptTemplate } from "./prompt-template";
export { PolicyError } from "./policy-error";
export type { Artifacts, AttemptInfo, RolloutInfo } from "./rollout-info";
export { AgentContractError } from "./contract-error";
// `runCode` runs model-written code in a fresh sandboxed isolate: the sandbox the Worker installs
// at start.
export { installCodeSandbox, runCode } from "./run-code";
export type { Action } from "../schemas/action";
export type { ChatMessage, ToolCall, ToolDefinition } from "../schemas/chat";
export type { JsonObject, JsonValue } from "../schemas/json";
export type { AgentTask } from "../schemas/agent-task";
export type { Span, SpanInput } from "../schemas/span";
export type { Step } from "../schemas/step";
export type { Trajectory } from "../schemas/trajectory";
