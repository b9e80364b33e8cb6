import { describe, expect, it } from "vitest";
import { mintTurnRef, readTurnRef } from "../../../../../src/gateway/apis/turn-ref";

describe("turn references", () => {
  it("mints the versioned prefix and unpadded base64url of the call id", () => {
    expect(mintTurnRef("call-1")).toBe("edge-rollout.v1.Y2FsbC0x");
    expect(mintTurnRef("a?>")).toBe("edge-rollout.v1.YT8-");
    expect(mintTurnRef("r:0:1/c?")).not.toMatch(/[+/=]/);
  });

  it("reads back any call id, non-ASCII included", () => {
    for (const callId of ["c", "call-1", "rollout:3:0.t1-2/call-17", "émoji 🎉", "\ufeffbom"])
      expect(readTurnRef(mintTurnRef(callId))).toBe(callId);
  });

  it("reads null from anything the gateway did not mint", () => {
    expect(readTurnRef("EqQBCkgIARABGAIiQL3n…real-anthropic-signature")).toBeNull();
    expect(readTurnRef("edge-rollout.v1.")).toBeNull();
    expect(readTurnRef("edge-rollout.v2.Y2FsbC0x")).toBeNull();
    expect(readTurnRef("edge-rollout.v1.Y2FsbC0x=")).toBeNull(); // padded: not canonical
    expect(readTurnRef("edge-rollout.v1.Y2F+bC0x")).toBeNull(); // base64, not base64url
    expect(readTurnRef("edge-rollout.v1.Y")).toBeNull(); // impossible length
    expect(readTurnRef("edge-rollout.v1.Y2FsbC0y")).toBe("call-2");
    expect(readTurnRef("edge-rollout.v1.gA")).toBeNull(); // byte 0x80: not UTF-8
  });
});
