/**
 * @module Test doubles for edge-rollout. The vLLM simulator is Node-only (node:http): import
 * it from Node tests, scripts and benches, never from Worker code.
 */
export { startVllmSimulator, type VllmSimulator } from "./server";
export { freePort } from "./free-port";
export {
  VllmSimulatorOptions,
  LatencyOptions,
  FaultOptions,
  CompatOptions,
  TailOptions,
  SimulatorConfigPatch,
} from "./options";
export { SimulatorStats, FaultKind } from "./stats";
export {
  encode,
  decode,
  tokenToString,
  VOCAB_SIZE,
  EOS_TOKEN_ID,
  IM_START_TOKEN_ID,
  SPECIAL_TOKENS,
  type DecodeOptions,
} from "./tokenizer";
export {
  decodeIds,
  tokenText,
  isTokenId,
  type SimTokenizer,
  type TokenizerName,
  type ChatRenderOptions,
} from "./sim-tokenizer";
export { tokenizerFor } from "./tokenizer-registry";
export {
  renderChatPrompt,
  renderAssistantBody,
  toolCallBlockText,
  toolsBlockText,
  type RenderChatOptions,
} from "./chat-template";
export { parseHermesOutput, type ParsedCompletion, type ParsedToolCall } from "./hermes";
export { createRng, type Rng } from "./rng";
