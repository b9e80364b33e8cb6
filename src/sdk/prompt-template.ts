/** @module Prompt templates: Agent-lightning's PromptTemplate resource with its f-string engine. */
import type { JsonValue } from "../schemas/json";
import { AgentContractError } from "./contract-error";

const FIELD = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|\{|\}/g;

/**
 * A prompt with `{name}` fields, formatted like Python's `str.format` (`{{` and `}}` are literal
 * braces). Stored in the policy as a string or as `{template, engine: "f-string"}`.
 *
 * @example
 * new PromptTemplate("Solve: {problem}").format({ problem: "2 + 2" }); // "Solve: 2 + 2"
 */
export class PromptTemplate {
  readonly template: string;
  readonly engine = "f-string" as const;

  constructor(template: string) {
    this.template = template;
    PromptTemplate.#fields(template);
  }

  /** The field names the template uses, in order of first use. */
  get fields(): string[] {
    return PromptTemplate.#fields(this.template);
  }

  /** The template with every `{name}` replaced by `String(values[name])`; a missing value throws. */
  format(values: Record<string, unknown>): string {
    return this.template.replace(FIELD, (match, name: string | undefined) => {
      if (match === "{{") return "{";
      if (match === "}}") return "}";
      if (name === undefined)
        throw new AgentContractError(
          `prompt template has a lone "${match}"; write "${match}${match}" for a literal brace`,
        );
      if (!(name in values) || values[name] === undefined)
        throw new AgentContractError(`prompt template needs a value for {${name}}`);
      return String(values[name]);
    });
  }

  /** Reads a stored resource value: a template string or `{template, engine?: "f-string"}`. */
  static fromJson(value: JsonValue): PromptTemplate {
    if (typeof value === "string") return new PromptTemplate(value);
    if (
      value &&
      typeof value === "object" &&
      !Array.isArray(value) &&
      typeof value.template === "string"
    ) {
      const engine = value.engine ?? "f-string";
      if (engine !== "f-string")
        throw new AgentContractError(
          `prompt template engine "${String(engine)}" is not supported (only "f-string")`,
        );
      return new PromptTemplate(value.template);
    }
    throw new AgentContractError(
      'a prompt template resource must be a string or {"template": string, "engine"?: "f-string"}',
    );
  }

  static #fields(template: string): string[] {
    const names: string[] = [];
    for (const match of template.matchAll(FIELD)) {
      const [text, name] = match;
      if (name !== undefined && !names.includes(name)) names.push(name);
      if (name === undefined && text !== "{{" && text !== "}}")
        throw new AgentContractError(
          `prompt template has a lone "${text}" at ${match.index}; write "${text}${text}" for a literal brace`,
        );
    }
    return names;
  }
}
