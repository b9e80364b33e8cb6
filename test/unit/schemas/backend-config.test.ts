import { describe, expect, it } from "vitest";
import { OpenAiBackendConfig } from "../../../src/schemas/backend-config";

describe("OpenAiBackendConfig", () => {
  it("reads Agent-lightning's `endpoint` as base_url", () => {
    expect(
      OpenAiBackendConfig.parse({ name: "openai", endpoint: "http://127.0.0.1:9/v1" }),
    ).toEqual({ name: "openai", base_url: "http://127.0.0.1:9/v1" });
    expect(
      OpenAiBackendConfig.parse({ name: "openai", base_url: "http://127.0.0.1:9/v1" }).base_url,
    ).toBe("http://127.0.0.1:9/v1");
  });

  it("refuses endpoint and base_url together, and a bad endpoint under the base_url field", () => {
    expect(
      OpenAiBackendConfig.safeParse({
        name: "openai",
        endpoint: "http://a/v1",
        base_url: "http://a/v1",
      }).error!.issues[0],
    ).toMatchObject({ code: "unrecognized_keys", keys: ["endpoint"] });
    expect(
      OpenAiBackendConfig.safeParse({ name: "openai", endpoint: "ftp://a" }).error!.issues[0]!.path,
    ).toEqual(["base_url"]);
  });
});
