/** Unit: what PUT /v1/policy and PUT /v1/resources accept before anything reaches the policy object. */
import { describe, expect, it } from "vitest";
import { PolicyUpdate } from "../../../../src/runtime/policy/policy-api";
import {
  MAX_RESOURCE_BYTES,
  validateResource,
} from "../../../../src/runtime/policy/resource-input";

describe("PolicyUpdate", () => {
  it("keeps sampling keys the caller did not send absent, so they merge instead of resetting", () => {
    expect(PolicyUpdate.parse({ sampling: { top_p: 0.5 } })).toEqual({ sampling: { top_p: 0.5 } });
  });

  it("checks a built-in backend against its own schema and fills its defaults", () => {
    const bad = PolicyUpdate.safeParse({ backend: { name: "vllm", replicas: ["ftp://x"] } });
    expect(bad.error?.issues.map((issue) => issue.path.join("."))).toEqual(["backend.replicas.0"]);
    expect(
      PolicyUpdate.parse({ backend: { name: "vllm", replicas: ["http://a:1"] } }).backend,
    ).toEqual({ name: "vllm", replicas: ["http://a:1"], load_factor: 1.25 });
  });

  it("refuses a backend name the registry does not know, and unknown fields at their own path", () => {
    expect(
      PolicyUpdate.safeParse({ backend: { name: "mine" } }).error?.issues.map((issue) =>
        issue.path.join("."),
      ),
    ).toEqual(["backend.name"]);
    expect(
      PolicyUpdate.safeParse({
        backend: { name: "openai", base_url: "http://a:1", extra: 1 },
      }).error?.issues.map((issue) => issue.path.join(".")),
    ).toEqual(["backend.extra"]);
  });

  it("refuses policy_version: only sync/end moves the version", () => {
    expect(PolicyUpdate.safeParse({ policy_version: 2 }).error?.issues[0]?.code).toBe(
      "unrecognized_keys",
    );
  });
});

describe("validateResource", () => {
  it("names the field that is wrong", () => {
    expect(validateResource("a/b", 1)).toMatchObject({ ok: false, errors: [{ path: "name" }] });
    expect(validateResource("ok", undefined)).toMatchObject({
      ok: false,
      errors: [{ path: "value" }],
    });
    expect(validateResource("ok", "x".repeat(MAX_RESOURCE_BYTES))).toMatchObject({
      ok: false,
      errors: [{ path: "value" }],
    });
  });

  it("serializes a valid value for storage", () => {
    expect(validateResource("prompt.v-1_x", { a: [1, null] })).toEqual({
      ok: true,
      json: '{"a":[1,null]}',
    });
  });
});
