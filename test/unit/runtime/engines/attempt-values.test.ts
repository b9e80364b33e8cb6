import { describe, expect, it } from "vitest";
import { artifactStore } from "../../../../src/runtime/engines/artifact-store";
import { AttemptSpans } from "../../../../src/runtime/engines/attempt-spans";
import { loadResources } from "../../../../src/runtime/engines/named-resources";
import { rewardFromResult } from "../../../../src/runtime/engines/rollout-result";
import { AgentContractError } from "../../../../src/sdk/contract-error";
import { jsonResource, promptTemplate } from "../../../../src/sdk/resources";
import { z } from "zod";

const spans = () =>
  new AttemptSpans(
    { addEvents: async () => ({ ok: true as const, spans: [] }) },
    1,
    () => undefined,
  );

describe("rewardFromResult", () => {
  it("takes a number as the reward, nothing as the last emitted reward, spans as their last reward", () => {
    expect(rewardFromResult(0.5, spans(), "f")).toBe(0.5);
    const emitted = spans();
    emitted.record({ kind: "reward", value: 0.25 });
    expect(rewardFromResult(undefined, emitted, "f")).toBe(0.25);
    expect(rewardFromResult(undefined, spans(), "f")).toBeNull();
    expect(
      rewardFromResult(
        [
          { kind: "reward", value: 1 },
          { kind: "message", value: "x" },
        ],
        spans(),
        "f",
      ),
    ).toBe(1);
  });

  it("refuses NaN, other types and invalid spans, naming what was returned", () => {
    expect(() => rewardFromResult(Number.POSITIVE_INFINITY, spans(), "f")).toThrow(
      "f returned Infinity; return a finite number",
    );
    expect(() => rewardFromResult("1", spans(), "f")).toThrow('f returned the string "1"');
    expect(() => rewardFromResult([{ kind: "reward", value: "high" }], spans(), "f")).toThrow(
      "f returned an invalid span at [0]: value:",
    );
  });
});

describe("loadResources", () => {
  const asked: string[] = [];
  const store = (values: Record<string, unknown>) => ({
    async getResource(name: string, rolloutId: string) {
      asked.push(rolloutId);
      return name in values
        ? {
            ok: true as const,
            name,
            version: 3,
            id: `${name}@3`,
            value: values[name] as never,
            created_at: 0,
          }
        : { ok: false as const, reason: "not_found" as const };
    },
  });

  it("reads the latest stored version, else the declared default, and reports which", async () => {
    const loaded = await loadResources(
      store({ tmpl: "Hi {x}" }),
      {
        greeting: promptTemplate("Yo {x}", { name: "tmpl" }),
        level: jsonResource(1),
      },
      "r-1",
    );
    expect(asked).toEqual(["r-1", "r-1"]);
    expect(loaded.versions).toEqual({ greeting: "tmpl@3", level: "default" });
    expect((loaded.values.greeting as { format: (v: object) => string }).format({ x: 1 })).toBe(
      "Hi 1",
    );
    expect(loaded.values.level).toBe(1);
  });

  it("refuses a stored value its declaration cannot read, naming the version", async () => {
    const specs = {
      rubric: jsonResource({ strict: false }, { schema: z.object({ strict: z.boolean() }) }),
    };
    await expect(loadResources(store({ rubric: { strict: "yes" } }), specs, "r-2")).rejects.toThrow(
      /^resource "rubric" \(rubric@3\) cannot be used: resource value does not match its schema: strict:/,
    );
  });
});

describe("artifactStore", () => {
  it("writes under the rollout's prefix and reads back, refusing paths that escape it", async () => {
    const blobs = new Map<string, ArrayBuffer | string>();
    const store = artifactStore(
      {
        put: async (key, body) => void blobs.set(key, body),
        get: async (key) => {
          const body = blobs.get(key);
          return body === undefined
            ? null
            : typeof body === "string"
              ? (new TextEncoder().encode(body).buffer as ArrayBuffer)
              : body;
        },
      },
      "r-1",
      () => undefined,
    );
    expect(await store.write("out/answer.txt", "42")).toBe("rollouts/r-1/artifacts/out/answer.txt");
    expect(await store.readText("out/answer.txt")).toBe("42");
    expect(await store.read("missing")).toBeNull();
    for (const path of ["", "/abs", "a/../b", "a//b", "./a", "a\\b"])
      await expect(store.write(path, "x"), path).rejects.toThrow(AgentContractError);
  });
});
