import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidInputError } from "../../../../src/errors";
import {
  BackendRegistry,
  backendRegistry,
  createDefaultBackendRegistry,
  resolveBackend,
} from "../../../../src/gateway/backends";
import type { ModelBackend } from "../../../../src/gateway/model-backend";
import { depsWith } from "./backend-fixtures";

const deps = depsWith(Date.now);

/** The InvalidInputError `create` throws for `config`. */
function invalid(registry: BackendRegistry, config: unknown): InvalidInputError {
  try {
    registry.create(config, deps);
  } catch (error) {
    if (error instanceof InvalidInputError) return error;
    throw error;
  }
  throw new Error("expected an InvalidInputError");
}

describe("BackendRegistry", () => {
  it("ships vllm, vllm_pd and openai", () => {
    expect(backendRegistry.names()).toEqual(["openai", "vllm", "vllm_pd"]);
    expect(
      backendRegistry.create({ name: "vllm", replicas: ["http://127.0.0.1:1"] }, deps),
    ).toMatchObject({ name: "vllm", returnsTokenIds: true });
    expect(
      backendRegistry.create(
        { name: "vllm_pd", prefill: ["http://127.0.0.1:1"], decode: ["http://127.0.0.1:2"] },
        deps,
      ),
    ).toMatchObject({ name: "vllm_pd" });
    expect(
      backendRegistry.create({ name: "openai", base_url: "https://api.example.com/v1" }, deps),
    ).toMatchObject({ name: "openai", returnsTokenIds: false });
  });

  it("names each invalid field in the message and in details", () => {
    const error = invalid(backendRegistry, {
      name: "vllm",
      replicas: ["http://127.0.0.1:1", "ftp://nope"],
      load_factor: 0.5,
      extra: 1,
    });
    expect(error.status).toBe(422);
    expect(error.details).toEqual([
      { path: "backend.replicas.1", message: "must be an http(s) URL" },
      { path: "backend.load_factor", message: "load_factor must be >= 1" },
      { path: "backend.extra", message: "is not a known field" },
    ]);
    expect(error.message).toContain("backend.replicas.1: must be an http(s) URL");
    expect(invalid(backendRegistry, { name: "vllm", replicas: [] }).details).toEqual([
      { path: "backend.replicas", message: "replicas must list at least one server" },
    ]);
    expect(
      invalid(backendRegistry, { name: "vllm_pd", prefill: ["http://a:1"] }).details,
    ).toMatchObject([{ path: "backend.decode" }]);
  });

  it("rejects two entries that name the same server", () => {
    const error = invalid(backendRegistry, {
      name: "vllm",
      replicas: ["http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/"],
    });
    expect(error.details).toMatchObject([{ path: "backend.replicas.1" }]);
  });

  it("rejects an unknown or missing backend name, listing the known ones", () => {
    const unknown = invalid(backendRegistry, { name: "tgi", url: "http://x" });
    expect(unknown.details).toMatchObject([{ path: "backend.name" }]);
    expect(unknown.message).toContain(
      'unknown backend "tgi"; known backends: openai, vllm, vllm_pd',
    );
    expect(invalid(backendRegistry, { replicas: [] }).details).toMatchObject([
      { path: "backend.name" },
    ]);
    expect(invalid(backendRegistry, "vllm").details).toMatchObject([{ path: "backend" }]);
  });

  it("builds a custom backend from its own validated config", async () => {
    const registry = createDefaultBackendRegistry();
    const echo = (greeting: string): ModelBackend => ({
      name: "echo",
      returnsTokenIds: false,
      request: async (_path, body) => ({ body: { greeting, body }, replica: "echo" }),
      openStream: () => Promise.reject(new Error("no streams")),
    });
    registry.register("echo", {
      schema: z.object({
        name: z.literal("echo"),
        greeting: z.string().min(1, "greeting must not be empty"),
      }),
      create: (config) => echo(config.greeting),
    });
    const backend = registry.create({ name: "echo", greeting: "hi" }, deps);
    expect((await backend.request("/chat/completions", { a: 1 }, { rolloutId: "r" })).body).toEqual(
      { greeting: "hi", body: { a: 1 } },
    );
    expect(invalid(registry, { name: "echo", greeting: "" }).details).toEqual([
      { path: "backend.greeting", message: "greeting must not be empty" },
    ]);
    expect(registry.names()).toContain("echo");
    expect(backendRegistry.names()).not.toContain("echo");
    expect(() =>
      registry.register("echo", { schema: z.object({}), create: () => echo("x") }),
    ).toThrow(TypeError);
    expect(() =>
      registry.register("Bad Name", { schema: z.object({}), create: () => echo("x") }),
    ).toThrow(TypeError);
  });
});

describe("resolveBackend", () => {
  it("returns one backend per canonical config, so replica state survives between calls", () => {
    const registry = createDefaultBackendRegistry();
    const a = resolveBackend(
      registry,
      { name: "vllm", replicas: ["http://127.0.0.1:1"], load_factor: 2 },
      deps,
    );
    const b = resolveBackend(
      registry,
      { load_factor: 2, replicas: ["http://127.0.0.1:1"], name: "vllm" },
      deps,
    );
    const c = resolveBackend(
      registry,
      { name: "vllm", replicas: ["http://127.0.0.1:2"], load_factor: 2 },
      deps,
    );
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(
      resolveBackend(
        createDefaultBackendRegistry(),
        { name: "vllm", replicas: ["http://127.0.0.1:1"], load_factor: 2 },
        deps,
      ),
    ).not.toBe(a);
    expect(() => resolveBackend(registry, { name: "vllm", replicas: ["nope"] }, deps)).toThrow(
      InvalidInputError,
    );
  });
});
