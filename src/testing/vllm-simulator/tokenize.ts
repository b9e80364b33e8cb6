/** @module `POST /tokenize` and `POST /detokenize`, served at the root as vLLM does (not under /v1). */
import type { ServerResponse } from "node:http";
import { renderChatPrompt, type RenderChatOptions } from "./chat-template";
import { sendJson, parseBody } from "./http-io";
import type { SimulatorConfig } from "./options";
import { checkModel, checkTokenIds } from "./request-checks";
import { DetokenizeRequest, TokenizeRequest } from "./request-schemas";
import { decode, encode, tokenToString } from "./tokenizer";

/**
 * Tokenizes a plain prompt, or renders a chat exactly as `/v1/chat/completions` would (same
 * template, same tools block), so `count` equals that call's prompt length.
 */
export function handleTokenize(body: unknown, res: ServerResponse, config: SimulatorConfig): void {
  const request = parseBody(TokenizeRequest, body);
  checkModel(request.model, config.model);
  // Both variants are loose objects, so `in` cannot narrow the union; the prompt field decides.
  const tokens =
    typeof request.prompt === "string"
      ? encode(request.prompt)
      : renderChatPrompt(request.messages as Parameters<typeof renderChatPrompt>[0], {
          tools: request.tools as RenderChatOptions["tools"],
          addGenerationPrompt: request.add_generation_prompt as boolean | null | undefined,
          stripThinkInHistory: config.stripThinkInHistory,
        });
  sendJson(res, 200, {
    count: tokens.length,
    max_model_len: config.maxModelLen,
    tokens,
    token_strs: request.return_token_strs ? tokens.map(tokenToString) : null,
  });
}

/** Decodes ids back to text, special tokens included. */
export function handleDetokenize(body: unknown, res: ServerResponse, config: SimulatorConfig): void {
  const request = parseBody(DetokenizeRequest, body);
  checkModel(request.model, config.model);
  checkTokenIds(request.tokens, "tokens");
  sendJson(res, 200, { prompt: decode(request.tokens) });
}
