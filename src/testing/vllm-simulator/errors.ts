/**
 * @module Errors in vLLM's wire shape: `{"error": {"message", "type", "param", "code"}}`, where
 * `code` is the HTTP status as a number (vLLM's ErrorInfo), not OpenAI's string codes.
 */
import type { z } from "zod";

/** vLLM's error body. */
export interface VllmErrorBody {
  error: { message: string; type: string; param: string | null; code: number };
}

/** An error a handler throws to answer with a vLLM error body. */
export class SimulatorHttpError extends Error {
  override readonly name = "SimulatorHttpError";
  readonly status: number;
  readonly type: string;
  readonly param: string | null;

  constructor(status: number, type: string, message: string, param: string | null = null) {
    super(message);
    this.status = status;
    this.type = type;
    this.param = param;
  }

  /** The JSON body vLLM would send. */
  toBody(): VllmErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.status } };
  }
}

/**
 * A 400 worded like vLLM's VLLMValidationError, whose string form appends
 * `(parameter=…, value=…)` to the message.
 */
export function validationError(message: string, param?: string, value?: unknown): SimulatorHttpError {
  const extras: string[] = [];
  if (param !== undefined) extras.push(`parameter=${param}`);
  if (value !== undefined && value !== null) extras.push(`value=${String(value)}`);
  const full = extras.length > 0 ? `${message} (${extras.join(", ")})` : message;
  return new SimulatorHttpError(400, "BadRequestError", full, param ?? null);
}

/** vLLM's 400 for a body that fails schema validation (pydantic's wording, approximately). */
export function schemaError(schemaName: string, error: z.ZodError): SimulatorHttpError {
  const lines = error.issues.map((issue) => `${["body", ...issue.path].join(".")}\n  ${issue.message}`);
  const count = error.issues.length;
  const message = `${count} validation error${count === 1 ? "" : "s"} for ${schemaName}\n${lines.join("\n")}`;
  return new SimulatorHttpError(400, "BadRequestError", message);
}

/** vLLM's 404 when `model` is not the served name. */
export function modelNotFound(model: string): SimulatorHttpError {
  return new SimulatorHttpError(404, "NotFoundError", `The model \`${model}\` does not exist.`, "model");
}

/**
 * vLLM's 400 when prompt + requested output do not fit the context window (the wording of
 * its renderer's token-length check, counting output tokens as 0 when none were requested).
 */
export function contextLengthError(maxModelLen: number, promptTokens: number, maxTokens: number | null): SimulatorHttpError {
  const output = maxTokens ?? 0;
  return validationError(
    `This model's maximum context length is ${maxModelLen} tokens. However, you requested ` +
      `${output} output tokens and your prompt contains ${promptTokens} input tokens, for a total of ` +
      `${promptTokens + output} tokens. Please reduce the length of the input prompt or the number of requested output tokens.`,
    "input_tokens",
    promptTokens,
  );
}

/**
 * Rejects a prompt that leaves no room: vLLM needs prompt + max_tokens <= max_model_len and,
 * with no max_tokens, at least one free position for the first generated token.
 */
export function checkContextLength(maxModelLen: number, promptTokens: number, maxTokens: number | null): void {
  const needed = promptTokens + (maxTokens ?? 1);
  if (needed > maxModelLen) throw contextLengthError(maxModelLen, promptTokens, maxTokens);
}
