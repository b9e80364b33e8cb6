import { describe, expect, it } from "vitest";
import { AgentContractError } from "../../../src/sdk/contract-error";
import { PromptTemplate } from "../../../src/sdk/prompt-template";

describe("PromptTemplate", () => {
  it("formats {name} fields and keeps {{ }} as literal braces", () => {
    const template = new PromptTemplate("Solve {problem} for {who}; answer in \\boxed{{}}.");
    expect(template.fields).toEqual(["problem", "who"]);
    expect(template.format({ problem: "2 + 2", who: "me" })).toBe(
      "Solve 2 + 2 for me; answer in \\boxed{}.",
    );
  });

  it("names a missing value and a lone brace", () => {
    expect(() => new PromptTemplate("{a} {b}").format({ a: 1 })).toThrow(
      "prompt template needs a value for {b}",
    );
    expect(() => new PromptTemplate("a { b")).toThrow(AgentContractError);
  });

  it("reads a stored string or {template, engine: f-string}, and refuses other engines", () => {
    expect(PromptTemplate.fromJson("Hi {x}").template).toBe("Hi {x}");
    expect(
      PromptTemplate.fromJson({ template: "Hi {x}", engine: "f-string" }).format({ x: 1 }),
    ).toBe("Hi 1");
    expect(() => PromptTemplate.fromJson({ template: "Hi", engine: "jinja" })).toThrow(
      'prompt template engine "jinja" is not supported',
    );
    expect(() => PromptTemplate.fromJson(42)).toThrow(AgentContractError);
  });
});
