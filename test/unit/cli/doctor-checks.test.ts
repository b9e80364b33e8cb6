import { describe, expect, it } from "vitest";
import { formatChecks } from "../../../tools/cli/commands/doctor";
import {
  checkNode,
  meetsMinimum,
  policyServers,
  serverRoot,
} from "../../../tools/cli/doctor-checks";
import type { PolicyView } from "../../../src/schemas/policy";

const policy = (backend: PolicyView["backend"]): PolicyView => ({
  policy_version: 3,
  model: null,
  backend,
  sampling: { temperature: 1, top_p: 1 },
  syncing: null,
  in_flight: 0,
  resources: [],
  updated_at: 0,
});

describe("doctor's checks (unit)", () => {
  it("compares Node's version with a >= engines range", () => {
    expect(meetsMinimum("v20.20.2", ">=20.19")).toBe(true);
    expect(meetsMinimum("v20.18.9", ">=20.19")).toBe(false);
    expect(meetsMinimum("v22.0.0", ">= 20.19.1")).toBe(true);
    expect(meetsMinimum("v20.19.0", ">=20.19.0")).toBe(true);
    expect(meetsMinimum("v20.19.0", "^20")).toBeNull();
    expect(checkNode("v18.1.0", ">=20.19")).toMatchObject({
      status: "fail",
      fix: expect.stringContaining("install Node 20.19"),
    });
    expect(checkNode("v20.20.2", undefined).status).toBe("skip");
  });

  it("lists the servers of each backend, and none for the deployment default", () => {
    expect(policyServers(policy(null))).toBeNull();
    expect(
      policyServers(policy({ name: "vllm", replicas: ["http://a/v1", "http://b"], api_key: "k" })),
    ).toEqual({ servers: ["http://a/v1", "http://b"], apiKey: "k", tokenIds: true });
    expect(
      policyServers(policy({ name: "vllm_pd", prefill: ["http://p"], decode: ["http://d"] }))
        ?.servers,
    ).toEqual(["http://p", "http://d"]);
    expect(policyServers(policy({ name: "openai", base_url: "http://o/v1" }))).toEqual({
      servers: ["http://o/v1"],
      tokenIds: false,
    });
    expect(serverRoot("http://a:8000/v1/")).toBe("http://a:8000");
  });

  it("prints a checklist and what to fix", () => {
    const text = formatChecks([
      { name: "node", status: "ok", detail: "v20" },
      { name: "stack", status: "fail", detail: "down", fix: "start it" },
    ]);
    expect(text).toBe("[ok]   node: v20\n[FAIL] stack: down\n\nto fix (1):\n  - stack: start it");
  });
});
