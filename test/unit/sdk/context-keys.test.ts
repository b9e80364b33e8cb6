import { describe, expect, it } from "vitest";
import { destructuredKeys } from "../../../src/sdk/context-keys";

type Fn = (...args: never[]) => unknown;

describe("destructuredKeys", () => {
  it("reads the keys of an arrow, async, function and method parameter pattern", () => {
    expect(
      destructuredKeys((async ({ task, llm }: { task: 1; llm: 2 }) => [task, llm]) as Fn),
    ).toEqual(["task", "llm"]);
    expect(
      destructuredKeys(function named({ rollout }: { rollout: 1 }) {
        return rollout;
      } as Fn),
    ).toEqual(["rollout"]);
    const holder = {
      run({ signal }: { signal: 1 }) {
        return signal;
      },
    };
    expect(destructuredKeys(holder.run as Fn)).toEqual(["signal"]);
  });

  it("reads renamed, defaulted and nested keys, and skips a rest element", () => {
    type Context = {
      llm?: unknown;
      task?: unknown;
      rollout: { attempt?: unknown };
      [key: string]: unknown;
    };
    const fn = ({
      llm: model,
      task = { problem: "{ , }" },
      rollout: { attempt },
      ...rest
    }: Context) => [model, task, attempt, rest];
    expect(destructuredKeys(fn as Fn)).toEqual(["llm", "task", "rollout"]);
  });

  it("reads keys from minified source, where only property names survive", () => {
    const minified = new Function("return async({task:e,promptTemplate:t})=>e+t")() as Fn;
    expect(destructuredKeys(minified)).toEqual(["task", "promptTemplate"]);
  });

  it("returns null when the first parameter is not an object pattern", () => {
    expect(destructuredKeys(((ctx: unknown) => ctx) as Fn)).toBeNull();
    expect(destructuredKeys((() => 1) as Fn)).toBeNull();
  });
});
