/** @module `POST /tokenize` and `POST /detokenize`, served at the root as vLLM does (not under /v1). */
import type { ServerResponse } from "node:http";
import { sendJson, parseBody } from "./http-io";
import type { SimulatorConfig } from "./options";
import { checkModel, checkTokenIds } from "./request-checks";
import {
  type ChatMessageParam,
  DetokenizeRequest,
  TokenizeRequest,
  type ToolParam,
} from "./request-schemas";
import { decodeIds } from "./sim-tokenizer";
import { tokenizerFor } from "./tokenizer-registry";

/**
 * Tokenizes a plain prompt, or renders a chat exactly as `/v1/chat/completions` would (same
 * template, tools and `chat_template_kwargs`), so `count` equals that call's prompt length.
 * `token_strs` are vocabulary entries (`convert_ids_to_tokens`, e.g. `Ġis` for " is"), as vLLM
 * answers them, not the decoded text logprobs show.
 */
export function handleTokenize(body: unknown, res: ServerResponse, config: SimulatorConfig): void {
  const request = parseBody(TokenizeRequest, body);
  checkModel(request.model, config.model);
  const tokenizer = tokenizerFor(config.tokenizer);
  // Both variants are loose objects, so `in` cannot narrow the union; the prompt field decides.
  const tokens =
    typeof request.prompt === "string"
      ? tokenizer.encode(request.prompt)
      : tokenizer.renderChat(request.messages as ChatMessageParam[], {
          tools: request.tools as ToolParam[] | null | undefined,
          addGenerationPrompt: request.add_generation_prompt as boolean | null | undefined,
          chatTemplateKwargs: request.chat_template_kwargs as
            Record<string, unknown> | null | undefined,
          stripThinkInHistory: config.stripThinkInHistory,
        });
  sendJson(res, 200, {
    count: tokens.length,
    max_model_len: config.maxModelLen,
    tokens,
    token_strs: request.return_token_strs ? tokens.map((id) => tokenizer.vocabToken(id)) : null,
  });
}

/** Decodes ids back to text, special tokens included. */
export function handleDetokenize(
  body: unknown,
  res: ServerResponse,
  config: SimulatorConfig,
): void {
  const request = parseBody(DetokenizeRequest, body);
  checkModel(request.model, config.model);
  const tokenizer = tokenizerFor(config.tokenizer);
  checkTokenIds(tokenizer, request.tokens, "tokens");
  sendJson(res, 200, { prompt: decodeIds(tokenizer, request.tokens) });
}
