/** @module Resources an agent is given: the LLM bound to its rollout, and named, versioned resources. */
import type OpenAI from "openai";
import type { z } from "zod";
import type { JsonValue } from "../schemas/json";
import { AgentContractError } from "./contract-error";
import { PromptTemplate } from "./prompt-template";

/** A `fetch` as OpenAI-compatible clients take it. */
export type FetchFunction = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

/** Sampling parameters the rollout asks for (in training mode the policy's replace them at the gateway). */
export interface SamplingParameters {
  temperature: number;
  top_p: number;
  seed: number | null;
}

/**
 * The model, bound to one rollout (Agent-lightning's `LLM` resource). Inside the Worker, `fetch`
 * reaches the rollout's gateway in-process (no network hop), tags each call with the attempt and
 * aborts with the attempt; `openai` is a ready client over it. Any framework that takes a custom
 * fetch can be bound the same way, e.g. `createOpenAICompatible({ baseURL: llm.base_url, apiKey:
 * llm.api_key, fetch: llm.fetch })` (Vercel AI SDK) or `new OpenAI({ baseURL: llm.base_url, apiKey:
 * llm.api_key, fetch: llm.fetch })` for `@openai/agents`' `OpenAIChatCompletionsModel`.
 */
export interface LlmResource {
  /** `<origin>/v1/rollouts/<id>/llm/v1`: the rollout's OpenAI-compatible endpoint. */
  readonly base_url: string;
  /** The same URL under Agent-lightning's name (`LLM(endpoint, model, sampling_parameters)`). */
  readonly endpoint: string;
  /** The rollout's own key (it opens this rollout's gateway and nothing else). */
  readonly api_key: string;
  /** The served model name (the gateway uses the policy's model whatever a request names). */
  readonly model: string;
  readonly sampling_parameters: SamplingParameters;
  /** An `openai` client over `fetch` (no client-side retries: the gateway retries upstream). */
  readonly openai: OpenAI;
  /** The fetch that reaches the gateway; pass it to any client that takes a custom fetch. */
  readonly fetch: FetchFunction;
}

/**
 * A named resource an agent declares: read from the policy's versioned resources (`PUT
 * /v1/resources/:name`) at the start of each attempt, or `default` when the policy has none.
 */
export interface ResourceSpec<T> {
  /** Name in the policy's resource store. Default: the key it is declared under. */
  readonly name?: string;
  /** Used while the policy holds no version of the resource. */
  readonly default: T;
  /** Turns a stored JSON value into the resource; throws AgentContractError when it does not fit. */
  parse(value: JsonValue): T;
}

/** Declared resources by the key the agent's context exposes them under. */
export type ResourceSpecs = Record<string, ResourceSpec<unknown>>;

/** The values of declared resources, as the agent receives them. */
export type ResolvedResources<R extends ResourceSpecs> = {
  readonly [K in keyof R]: R[K] extends ResourceSpec<infer T> ? T : never;
};

/**
 * Declares a prompt template resource (Agent-lightning's `prompt_template`).
 *
 * @example
 * rollout(async ({ task, promptTemplate }) => { … promptTemplate.format({ problem: task.problem }) … },
 *   { name: "solver", resources: { promptTemplate: promptTemplate("Solve: {problem}") } });
 */
export function promptTemplate(
  defaultTemplate: string,
  options: { name?: string } = {},
): ResourceSpec<PromptTemplate> {
  return {
    ...options,
    default: new PromptTemplate(defaultTemplate),
    parse: (value) => PromptTemplate.fromJson(value),
  };
}

/** A JSON default's type without its literal types (`{ strict: true }` → `{ strict: boolean }`). */
export type Widened<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends readonly (infer U)[]
        ? Widened<U>[]
        : T extends object
          ? { [K in keyof T]: Widened<T[K]> }
          : T;

/**
 * Declares a JSON resource; with `schema`, a stored value is checked (and typed) by it.
 *
 * @example
 * const resources = { rubric: jsonResource({ strict: false }, { name: "rubric" }) };
 */
export function jsonResource<T extends JsonValue>(
  defaultValue: T,
  options?: { name?: string },
): ResourceSpec<Widened<T>>;
export function jsonResource<S extends z.ZodType>(
  defaultValue: z.output<S>,
  options: { name?: string; schema: S },
): ResourceSpec<z.output<S>>;
export function jsonResource(
  defaultValue: unknown,
  options: { name?: string; schema?: z.ZodType } = {},
): ResourceSpec<unknown> {
  const { schema, name } = options;
  return {
    ...(name === undefined ? {} : { name }),
    default: defaultValue,
    parse(value) {
      if (!schema) return value;
      const parsed = schema.safeParse(value);
      if (!parsed.success)
        throw new AgentContractError(
          `resource value does not match its schema: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "(value)"}: ${issue.message}`).join("; ")}`,
        );
      return parsed.data;
    },
  };
}
