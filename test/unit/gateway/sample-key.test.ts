import { describe, expect, it } from "vitest";
import { sampleKeyOf } from "../../../src/gateway/sample-key";

describe("sampleKeyOf", () => {
  it("keys a batch rollout by row and sample, whatever its batch and attempt", () => {
    expect(sampleKeyOf("gsm8k-step-3:12:5")).toBe("12:5");
    expect(sampleKeyOf("other-arm:12:5")).toBe("12:5");
    expect(sampleKeyOf("gsm8k-step-3:12:5.retry-2")).toBe("12:5");
    expect(sampleKeyOf("with:colons:in:id:0:1")).toBe("0:1");
  });

  it("keeps a tree child's suffix, and a rollout created alone keeps its own id", () => {
    expect(sampleKeyOf("b:3:0.t1-2")).toBe("3:0.t1-2");
    expect(sampleKeyOf("b:3:0.t1-2.retry-1")).toBe("3:0.t1-2");
    expect(sampleKeyOf("my-rollout")).toBe("my-rollout");
    expect(sampleKeyOf("my-rollout.retry-1")).toBe("my-rollout");
  });
});
