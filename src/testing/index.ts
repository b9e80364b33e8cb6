/**
 * @module Test doubles for edge-rollout. The vLLM simulator is Node-only (node:http): import
 * it from Node tests, scripts and benches, never from Worker code.
 */
export { startVllmSimulator, type VllmSimulator } from "./vllm-simulator/server";
export { freePort } from "./free-port";
export { VllmSimulatorOptions, LatencyOptions, FaultOptions, CompatOptions, TailOptions, SimulatorConfigPatch } from "./vllm-simulator/options";
export { SimulatorStats, FaultKind } from "./vllm-simulator/stats";
export {
  encode,
  decode,
  tokenToString,
  VOCAB_SIZE,
  EOS_TOKEN_ID,
  IM_START_TOKEN_ID,
  SPECIAL_TOKENS,
  type DecodeOptions,
} from "./vllm-simulator/tokenizer";
export { decodeIds, tokenText, isTokenId, type SimTokenizer, type TokenizerName, type ChatRenderOptions } from "./vllm-simulator/sim-tokenizer";
export { tokenizerFor } from "./vllm-simulator/tokenizer-registry";
export { renderChatPrompt, renderAssistantBody, toolCallBlockText, toolsBlockText, type RenderChatOptions } from "./vllm-simulator/chat-template";
export { parseHermesOutput, type ParsedCompletion, type ParsedToolCall } from "./vllm-simulator/hermes";
export { createRng, type Rng } from "./vllm-simulator/rng";
