/**
 * @module Backends registered by name (the seed's InferBackendRegistry): a config's `name`
 * selects a factory, whose zod schema validates the rest before anything is built.
 */
import type { z } from "zod";
import { InvalidInputError } from "../../errors";
import { BackendConfig } from "../../schemas/backend-config";
import type { ModelBackend } from "../model-backend";

/** What a factory may use: injected so tests and Workers' service bindings can replace them. */
export interface BackendDeps {
  fetch: typeof fetch;
  now: () => number;
}

/**
 * How to build one kind of backend. `schema` receives the whole config, `name` included, so it
 * must accept that key (a `z.literal(name)` field, as the built-ins have, or a loose object).
 */
export interface BackendFactory<S extends z.ZodType = z.ZodType> {
  schema: S;
  create(config: z.output<S>, deps: BackendDeps): ModelBackend;
}

/** One invalid field: `path` is dotted from `backend`, e.g. `backend.replicas.0`. */
export interface ConfigIssue {
  path: string;
  message: string;
}

const BACKEND_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** zod issues as `{path, message}` under `root`; an unknown key is reported at its own path. */
function configIssues(error: z.ZodError, root: string): ConfigIssue[] {
  return error.issues.flatMap((issue) => {
    const base = [root, ...issue.path.map(String)].join(".");
    if (issue.code === "unrecognized_keys")
      return issue.keys.map((key) => ({ path: `${base}.${key}`, message: "is not a known field" }));
    return [{ path: base, message: issue.message }];
  });
}

function invalidConfig(issues: ConfigIssue[]): InvalidInputError {
  const summary = issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
  return new InvalidInputError(`invalid backend config: ${summary}`, { details: issues });
}

/**
 * Parses `config` with `schema` or throws InvalidInputError whose message and `details` name
 * each bad field under `root` (default `backend`).
 */
export function parseBackendConfig<S extends z.ZodType>(
  schema: S,
  config: unknown,
  root = "backend",
): z.output<S> {
  const parsed = schema.safeParse(config);
  if (!parsed.success) throw invalidConfig(configIssues(parsed.error, root));
  return parsed.data;
}

/** Throws the InvalidInputError for one bad field, in the same shape as schema failures. */
export function rejectBackendField(path: string, message: string): never {
  throw invalidConfig([{ path, message }]);
}

/** A name → backend factory map. The default instance (`backendRegistry`) carries `vllm`, `vllm_pd` and `openai`. */
export class BackendRegistry {
  readonly #factories = new Map<string, BackendFactory>();

  /**
   * Adds a backend under `name`; a second factory under the same name is a programming error.
   *
   * @example
   * backendRegistry.register("echo", { schema: z.object({ name: z.literal("echo") }), create: () => echoBackend });
   */
  register<S extends z.ZodType>(name: string, factory: BackendFactory<S>): this {
    if (!BACKEND_NAME.test(name))
      throw new TypeError(`backend name "${name}" must match ${BACKEND_NAME}`);
    if (this.#factories.has(name)) throw new TypeError(`backend "${name}" is already registered`);
    this.#factories.set(name, factory as BackendFactory);
    return this;
  }

  /** The factory registered under `name`, or undefined. */
  get(name: string): BackendFactory | undefined {
    return this.#factories.get(name);
  }

  /** Every registered name, sorted. */
  names(): string[] {
    return [...this.#factories.keys()].sort();
  }

  /**
   * Validates `config` (its `name`, then the named factory's schema) and builds the backend.
   * Throws InvalidInputError naming the field, e.g. `backend.replicas.0`, or `backend.name`
   * with the known names for an unregistered backend.
   */
  create(config: unknown, deps: BackendDeps): ModelBackend {
    const { name } = parseBackendConfig(BackendConfig, config);
    const factory = this.#factories.get(name);
    if (!factory)
      rejectBackendField(
        "backend.name",
        `unknown backend "${name}"; known backends: ${this.names().join(", ")}`,
      );
    return factory.create(parseBackendConfig(factory.schema, config), deps);
  }
}
