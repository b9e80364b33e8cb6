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
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.status },
    };
  }
}

/** `VLLMValidationError.__str__`: the message, then `(parameter=…, value=…)` when set. */
function vllmValidationText(message: string, param?: string, value?: unknown): string {
  const extras: string[] = [];
  if (param !== undefined) extras.push(`parameter=${param}`);
  if (value !== undefined && value !== null) extras.push(`value=${String(value)}`);
  return extras.length > 0 ? `${message} (${extras.join(", ")})` : message;
}

/**
 * A 400 raised while serving (vllm/entrypoints/openai/engine/serving.py `create_error_response`):
 * type "BadRequestError", message worded like VLLMValidationError (vllm/exceptions.py).
 */
export function validationError(
  message: string,
  param?: string,
  value?: unknown,
): SimulatorHttpError {
  return new SimulatorHttpError(
    400,
    "BadRequestError",
    vllmValidationText(message, param, value),
    param ?? null,
  );
}

/** Python's repr of a str, as pydantic error dicts print it. */
function pyRepr(text: string): string {
  return text.includes("'") && !text.includes('"')
    ? `"${text}"`
    : `'${text.replaceAll("'", "\\'")}'`;
}

/** One pydantic error dict, printed as Python prints it inside FastAPI's error list. */
interface PydanticError {
  type: string;
  loc: ReadonlyArray<string | number>;
  msg: string;
}

function printErrors(errors: readonly PydanticError[]): string {
  const loc = (parts: PydanticError["loc"]) =>
    `(${parts.map((p) => (typeof p === "number" ? String(p) : pyRepr(p))).join(", ")}${parts.length === 1 ? "," : ""})`;
  return `[${errors.map((e) => `{'type': ${pyRepr(e.type)}, 'loc': ${loc(e.loc)}, 'msg': ${pyRepr(e.msg)}}`).join(", ")}]`;
}

/**
 * A 400 from request parsing: FastAPI's RequestValidationError as vLLM's api_server handler
 * answers it (type `HTTPStatus.BAD_REQUEST.phrase` = "Bad Request", the message the printed
 * error list, `param` from a VLLMValidationError raised in a request-model validator).
 */
export function requestValidationError(
  errors: readonly PydanticError[],
  param: string | null,
): SimulatorHttpError {
  return new SimulatorHttpError(400, "Bad Request", printErrors(errors), param);
}

/** A request-model validator (a `@model_validator` of ChatCompletionRequest) refusing the body. */
export function modelValidatorError(
  message: string,
  param: string,
  value?: unknown,
): SimulatorHttpError {
  return requestValidationError(
    [
      {
        type: "value_error",
        loc: ["body"],
        msg: `Value error, ${vllmValidationText(message, param, value)}`,
      },
    ],
    param,
  );
}

/** vLLM's 400 for a body that fails schema validation; `param` names the first bad field. */
export function schemaError(error: z.ZodError): SimulatorHttpError {
  const errors = error.issues.map((issue) => ({
    type: issue.code,
    loc: ["body", ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    msg: issue.message,
  }));
  const first = error.issues[0]?.path.filter((p) => typeof p === "string");
  return requestValidationError(errors, first && first.length > 0 ? first.join(".") : null);
}

/** vLLM's 404 when `model` is not the served name. */
export function modelNotFound(model: string): SimulatorHttpError {
  return new SimulatorHttpError(
    404,
    "NotFoundError",
    `The model \`${model}\` does not exist.`,
    "model",
  );
}

/**
 * vLLM's 400 when prompt + requested output do not fit the context window (the wording of
 * its renderer's token-length check, counting output tokens as 0 when none were requested).
 */
export function contextLengthError(
  maxModelLen: number,
  promptTokens: number,
  maxTokens: number | null,
): SimulatorHttpError {
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
export function checkContextLength(
  maxModelLen: number,
  promptTokens: number,
  maxTokens: number | null,
): void {
  const needed = promptTokens + (maxTokens ?? 1);
  if (needed > maxModelLen) throw contextLengthError(maxModelLen, promptTokens, maxTokens);
}
